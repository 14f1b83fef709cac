"""The evidence report's wording of figures: money exact with its currency, rates as rates,
nested fee groups flattened; a quote section that reads right."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from pypdf import PdfReader

from payouts.evidence.pdf import evidence_pdf_write
from payouts.evidence.report_look import fit, money
from payouts.evidence.report_terms import fee_lines
from payouts.evidence.services import payout_evidence_pack
from tests.finance import make_draft, make_environment, make_staff


def test_money_keeps_every_digit_and_groups_thousands() -> None:
    assert money("1234.56", "USD") == "1,234.56 USD"
    assert money("15.0", "USD") == "15.00 USD"  # zeros added, never a digit lost
    assert money("0.123456", "USDC") == "0.123456 USDC"
    assert money("1000000", "EUR") == "1,000,000.00 EUR"
    assert money("", "USD") == "—"


def test_fees_are_flattened_amounts_with_currency_rates_marked() -> None:
    fees = {
        "base_fees": {"fixed_fee": 15.0, "percentage_fee": 0.001, "fx_markup": 0.0},
        "network_fee": "1.5",
        "penalty_markup": 0.002,
        "total_fees": 16.5,
    }
    assert fee_lines(fees, "USD") == [
        ["Base fees: fixed fee", "15.00 USD"],
        ["Base fees: percentage fee", "0.001 (rate)"],
        ["Base fees: fx markup", "0.0 (rate)"],
        ["Network fee", "1.50 USD"],
        ["Penalty markup", "0.002 (rate)"],
    ]


def test_a_long_header_is_cut_to_fit() -> None:
    from payouts.evidence.report_look import fonts_register

    fonts_register()
    assert fit("Payout #1", 200, 8) == "Payout #1"
    cut = fit("Payout #1 · " + "X" * 300, 200, 8)
    assert cut.endswith("…") and len(cut) < 100


@pytest.mark.django_db
def test_the_quote_section_reads_with_its_rate_and_fees(settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path
    draft = make_draft(maker=make_staff("finance_maker"), environment=make_environment())
    pack = payout_evidence_pack(payout=draft, by=make_staff("admin"))
    with pack.file, zipfile.ZipFile(pack.file) as archive:
        facts = json.loads(archive.read("evidence.json"))
    facts["quote"] = {
        "id": "q-123",
        "status": "ACTIVE",
        "requested_by": "maker@pay.test",
        "base_amount": "1000.00",
        "base_currency": "USD",
        "quote_amount": "921.35",
        "quote_currency": "EUR",
        "rate": "0.921350",
        "service_rate": "0.925000",
        "payment_rail": "SEPA",
        "network": "",
        "total_fees": "3.50",
        "fees": {"base_fixed_fee": "3.50", "base_percentage_fee": "0.00100000"},
        "created_at": "2026-11-26T10:00:00+00:00",
        "expires_at": "2026-11-26T10:15:00+00:00",
    }
    out = io.BytesIO()
    evidence_pdf_write(facts, out)
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(out).pages).split())
    for fact in (
        "q-123",
        "1,000.00 USD",
        "921.35 EUR",
        "1 USD = 0.921350 EUR",
        "Fee: base fixed fee 3.50 USD",
        "Fee: base percentage fee 0.00100000 (rate)",
        "2026-11-26 10:15:00 UTC",
    ):
        assert fact in text, fact
