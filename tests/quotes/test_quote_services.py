"""Quotes against the real emulator: both amount modes, stablecoins, re-pricing and expiry."""

from __future__ import annotations

from decimal import Decimal as D

import pytest
from django.core.exceptions import PermissionDenied

from gateway.models import Environment
from quotes.models import Quote, QuoteStatus
from quotes.selectors import quote_check
from quotes.services import QuoteRefused, quote_recheck, quote_reprice, quote_request
from staff.models import AuditEntry, StaffUser
from tests.finance import make_staff
from tests.gateway.conftest import LiveEmulator

pytestmark = pytest.mark.django_db(transaction=True)


def test_forward_quote_matches_the_fee_rules_and_our_recomputation(
    sandbox: Environment, maker: StaffUser
) -> None:
    quote = quote_request(
        by=maker,
        environment=sandbox,
        base_currency="USD",
        quote_currency="MXN",
        amount=D("1000.00"),
    )
    # interface.md fee rules with the MXN/SPEI profile: fixed 1.00 + 0.5 % of 1000 = 6.00.
    assert quote.total_fees == D("6.00")
    assert quote.base_amount == D("1000.00")
    expected_rate = (quote.rate * (1 - D("0.003") - quote.penalty_markup)).quantize(D("0.000001"))
    assert quote.service_rate == expected_rate
    assert quote.quote_amount == ((D("994.00")) * expected_rate).quantize(D("0.01"))
    assert quote.status == QuoteStatus.ACTIVE and quote.account_type == "SPEI"
    assert quote_check(quote).agrees
    entry = AuditEntry.objects.get(action="quote.requested")
    assert entry.actor == maker and entry.target_id == str(quote.pk)


def test_amount_in_destination_is_solved_so_the_recipient_gets_at_least_the_request(
    sandbox: Environment, maker: StaffUser
) -> None:
    quote = quote_request(
        by=maker,
        environment=sandbox,
        base_currency="USD",
        quote_currency="COP",
        amount=D("500000.00"),
        amount_in_destination=True,
    )
    assert quote.quote_amount == D("500000.00")
    check = quote_check(quote)
    assert check.agrees, check.disagreements
    assert check.quote_amount is not None and check.quote_amount >= D("500000.00")


def test_a_stablecoin_quote_carries_its_network_fee(sandbox: Environment, maker: StaffUser) -> None:
    quote = quote_request(
        by=maker,
        environment=sandbox,
        base_currency="USDC",
        quote_currency="MXN",
        amount=D("200.00"),
        network="polygon",
    )
    assert quote.network == "polygon" and quote.network_fee == D("0.20")
    # fixed 1.00 + network 0.20 + 0.5 % of 200
    assert quote.total_fees == D("2.20")
    assert quote_check(quote).agrees


def test_a_stablecoin_without_its_network_is_refused_before_anything_is_sent(
    live_emulator: LiveEmulator, sandbox: Environment, maker: StaffUser
) -> None:
    live_emulator.witness.clear()
    with pytest.raises(QuoteRefused) as refused:
        quote_request(
            by=maker,
            environment=sandbox,
            base_currency="USDT",
            quote_currency="MXN",
            amount=D("50"),
        )
    assert refused.value.refusals[0].field == "network"
    assert live_emulator.witness.count("/v1/quotations") == 0


def test_changing_the_amount_reprices_and_restarts_the_timer(
    live_emulator: LiveEmulator, sandbox: Environment, maker: StaffUser
) -> None:
    quote = quote_request(
        by=maker,
        environment=sandbox,
        base_currency="USD",
        quote_currency="MXN",
        amount=D("100"),
    )
    first_expiry = quote.expires_at
    live_emulator.advance(300)
    repriced = quote_reprice(by=maker, quote=quote, amount=D("250.00"))
    assert repriced.requested_amount == D("250.00") and repriced.base_amount == D("250.00")
    assert repriced.total_fees == D("2.25")
    assert (repriced.expires_at - first_expiry).total_seconds() >= 299
    assert repriced.repriced_count == 1 and quote_check(repriced).agrees
    entry = AuditEntry.objects.get(action="quote.repriced")
    assert entry.details["before"]["amount"] == "100.00"
    assert entry.details["after"]["amount"] == "250.00"


def test_a_quote_expired_by_the_upstream_clock_is_refused_and_marked_expired(
    live_emulator: LiveEmulator, sandbox: Environment, maker: StaffUser
) -> None:
    quote = quote_request(
        by=maker,
        environment=sandbox,
        base_currency="USD",
        quote_currency="MXN",
        amount=D("100"),
    )
    live_emulator.advance(601)
    with pytest.raises(QuoteRefused) as refused:
        quote_reprice(by=maker, quote=quote, amount=D("120"))
    assert refused.value.refusals[0].code == "QUOTE_INVALID_STATE"
    quote.refresh_from_db()
    assert quote.status == QuoteStatus.EXPIRED and not quote.is_usable()
    # A later attempt is refused locally: nothing more is sent.
    live_emulator.witness.clear()
    with pytest.raises(QuoteRefused):
        quote_reprice(by=maker, quote=quote, amount=D("130"))
    assert live_emulator.witness.count("/v1/quotations/" + quote.upstream_id) == 0


def test_recheck_reads_the_status_by_the_upstream_clock(
    live_emulator: LiveEmulator, sandbox: Environment, maker: StaffUser
) -> None:
    quote = quote_request(
        by=maker,
        environment=sandbox,
        base_currency="USD",
        quote_currency="BRL",
        amount=D("100"),
    )
    live_emulator.advance(601)
    assert quote_recheck(by=maker, quote=quote).status == QuoteStatus.EXPIRED
    assert AuditEntry.objects.filter(action="quote.status_changed").exists()


def test_only_makers_request_quotes(sandbox: Environment) -> None:
    approver = make_staff("finance_approver")
    with pytest.raises(PermissionDenied):
        quote_request(
            by=approver,
            environment=sandbox,
            base_currency="USD",
            quote_currency="MXN",
            amount=D("1"),
        )
    assert not Quote.objects.exists()
