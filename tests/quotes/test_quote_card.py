"""The quote card as a person reads it: amounts in their currency, the arithmetic explained."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal as D
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from gateway.services.environments import environment_switch
from quotes.models import Quote
from staff.models import StaffUser
from tests.finance import make_environment, make_staff

pytestmark = pytest.mark.django_db

# USDC -> COP, 2,000,000.00 COP to arrive (tests/quotes/test_arithmetic.py works it by hand).
COP_TO_ARRIVE: dict[str, Any] = {
    "base_currency": "USDC",
    "quote_currency": "COP",
    "account_type": "PSE",
    "network": "solana",
    "amount_in_destination": True,
    "requested_amount": D("2000000.00"),
    "base_amount": D("513.45"),
    "quote_amount": D("2000000.00"),
    "rate": D("3950.000000"),
    "service_rate": D("3934.200000"),
    "base_fixed_fee": D("1.50"),
    "base_percentage_fee": D("0.006"),
    "base_fx_markup": D("0.004"),
    "client_fixed_fee": D("0"),
    "client_percentage_fee": D("0"),
    "client_fx_markup": D("0"),
    "network_fee": D("0.50"),
    "penalty_markup": D("0"),
    "total_fees": D("5.08"),
}


def _quote_page(maker: StaffUser, **figures: Any) -> tuple[Quote, str]:
    environment = make_environment()
    environment_switch(user=maker, environment=environment)
    quote = Quote.objects.create(
        environment=environment,
        upstream_id="quo_card",
        requested_by=maker,
        status="ACTIVE",
        expires_at=timezone.now() + timedelta(minutes=10),
        **{**COP_TO_ARRIVE, **figures},
    )
    client = Client()
    client.force_login(maker)
    response = client.get(f"/quotes/{quote.pk}/")
    assert response.status_code == 200
    return quote, response.content.decode()


def test_an_amount_to_arrive_is_shown_in_the_destination_currency() -> None:
    _, html = _quote_page(make_staff("finance_maker"))
    assert "2,000,000.00 COP to arrive" in html
    assert "2,000,000.00 USDC" not in html
    assert "New amount (COP, to arrive)" in html


def test_an_amount_to_send_is_shown_in_the_source_currency() -> None:
    figures = {"amount_in_destination": False, "requested_amount": D("513.45")}
    _, html = _quote_page(make_staff("finance_maker"), **figures)
    assert "513.45 USDC to send" in html


def test_the_arithmetic_table_separates_thousands_and_explains_its_difference() -> None:
    _, html = _quote_page(make_staff("finance_maker"))
    assert '<span class="money">2,000,029.25 COP</span>' in html  # recomputed
    assert "money-negative" in html and "-29.25 COP" in html  # the difference, in its currency
    assert "within the stated tolerance" in html and "agree exactly" not in html
    assert 'data-testid="arithmetic-notes"' in html
    assert "rounded that up to the cent of the source currency" in html
    assert "3934.200000" in html  # a rate keeps its 6 decimals, no currency


def test_a_difference_beyond_the_tolerance_is_named_not_called_agreement() -> None:
    _, html = _quote_page(make_staff("finance_maker"), quote_amount=D("1999900.00"))
    assert 'data-testid="arithmetic-disagrees"' in html
    assert 'data-testid="arithmetic-ok"' not in html
    # Stated 1,999,900.00 against 2,000,029.25 recomputed: named, with the tolerance it exceeds.
    assert "-129.25 COP" in html and "more than the" in html


def test_the_api_names_the_requested_currency_and_each_difference() -> None:
    maker = make_staff("finance_maker")
    quote, _ = _quote_page(maker)
    client = Client()
    client.force_login(maker)
    body = client.get(f"/api/v1/quotes/{quote.pk}").json()
    assert body["requested_currency"] == "COP"
    arithmetic = body["arithmetic"]
    assert arithmetic["agrees"] is True and arithmetic["exact"] is False
    amount = next(c for c in arithmetic["checks"] if c["name"] == "quote_amount")
    assert (amount["difference"], amount["currency"], amount["tolerance"]) == (
        "-29.25",
        "COP",
        "39.35",
    )
    assert "rounded that up" in amount["explanation"]
