"""A completed payout's receipt: its content (upstream ids, UETR, amounts and fees by kind, rate,
the recipient masked, the approvals), 409 for any other status, the link on the payout page."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader

from books.statements.receipt_pdf import receipt_pdf_write
from books.statements.receipts import receipt_build
from staff.errors import ServiceError
from tests.books.statement_fixtures import October, build_october
from tests.finance import make_environment

pytestmark = pytest.mark.django_db


@pytest.fixture
def october() -> October:
    return build_october(make_environment())


def _text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def test_receipt_reads_the_payout(october: October) -> None:
    out = io.BytesIO()
    receipt_pdf_write(receipt_build(payout=october.completed, by=None), out)
    text = _text(out.getvalue())
    for expected in (
        "Payout receipt",
        "po-1",
        "qt-1",
        "9f2c1c3e-4b1a-4d7e-8a55-0c1d2e3f4a5b",
        "100.00 USD",
        "Fixed fees",
        "1.50 USD",
        "Percentage fees",
        "2.00 USD",
        "Total fees",
        "3.50 USD",
        "Total debited",
        "103.50 USD",
        "1 USD = 19.840000 MXN",
        "1 USD = 20.000000 MXN",
        "0.60 USD (12.00 MXN)",
        "0.20 USD (4.00 MXN)",
        "1,984.00 MXN",
        "Bea Ruiz",
        "•••• 6789",
        october.approver.email,
        october.maker.email,
        "2026-10-02 15:00 UTC",
        "Page 1 of 1",
    ):
        assert expected in text, expected
    assert "123456789" not in text.replace("•••• 6789", "")


def test_only_a_completed_payout_has_one(october: October) -> None:
    for payout in (october.failed, october.returned):
        with pytest.raises(ServiceError) as refused:
            receipt_build(payout=payout, by=None)
        assert (refused.value.code, refused.value.status) == ("not_completed", 409)


def test_page_api_and_the_payout_page_link(october: October, client_for) -> None:  # type: ignore[no-untyped-def]
    client = client_for("auditor")
    for url in (
        f"/books/receipts/{october.completed.pk}/",
        f"/api/v1/books/payouts/{october.completed.pk}/receipt",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Type"] == "application/pdf"
        content = b"".join(response.streaming_content)  # type: ignore[attr-defined]
        assert "po-1" in _text(content)
    assert client.get(f"/books/receipts/{october.failed.pk}/").status_code == 409
    api = client.get(f"/api/v1/books/payouts/{october.failed.pk}/receipt")
    assert (api.status_code, api.json()["code"]) == (409, "not_completed")
    assert client.get("/api/v1/books/payouts/999999/receipt").status_code == 404
    approver = client_for("finance_approver")
    completed = approver.get(f"/payouts/{october.completed.pk}/")
    assert b'data-testid="receipt-download"' in completed.content
    failed = approver.get(f"/payouts/{october.failed.pk}/")
    assert b'data-testid="receipt-download"' not in failed.content
