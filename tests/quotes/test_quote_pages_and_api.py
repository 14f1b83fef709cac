"""The quote builder, detail and list pages and the quotes API, against the real emulator."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from gateway.models import Environment
from quotes.models import Quote, QuoteStatus
from staff.models import StaffUser
from tests.finance import make_staff
from tests.gateway.conftest import LiveEmulator
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db(transaction=True)
HTMX = {"HTTP_HX_REQUEST": "true"}


def _client(user: StaffUser) -> Client:
    return client_signed_in(user)


def test_the_builder_prices_a_quote_and_shows_the_breakdown_and_countdown(
    working_in: Environment, maker: StaffUser
) -> None:
    client = _client(maker)
    response = client.post(
        "/quotes/new/",
        {
            "base_currency": "USD",
            "quote_currency": "MXN",
            "amount_mode": "source",
            "amount": "1000",
        },
        **HTMX,
    )
    assert response.status_code == 200
    html = response.content.decode()
    quote = Quote.objects.get()
    assert 'data-testid="quote-card"' in html and 'data-testid="fee-breakdown"' in html
    assert "6.00 USD" in html  # total fees
    assert 'data-testid="arithmetic-ok"' in html
    assert f'datetime="{quote.expires_at.isoformat()}"' in html
    assert "data-countdown" in html


def test_a_currency_change_re_renders_its_rails_and_a_stablecoin_asks_its_network(
    working_in: Environment, maker: StaffUser
) -> None:
    client = _client(maker)
    usd = client.get("/quotes/new/?quote_currency=USD&base_currency=USD&refresh=1", **HTMX)
    html = usd.content.decode()
    for rail in ("ACH", "WIRE", "SWIFT", "PEUSD"):
        assert f'value="{rail}"' in html
    usdt = client.get("/quotes/new/?quote_currency=MXN&base_currency=USDT&refresh=1", **HTMX)
    html = usdt.content.decode()
    assert 'value="tron"' in html and 'value="polygon"' in html and 'value="solana"' not in html
    assert "USDT needs its network." in html


def test_an_upstream_refusal_shows_next_to_its_field_with_the_valid_choices(
    working_in: Environment, maker: StaffUser
) -> None:
    client = _client(maker)
    response = client.post(
        "/quotes/new/",
        {
            "base_currency": "USD",
            "quote_currency": "USD",
            "account_type": "WIRE",
            "amount_mode": "source",
            "amount": "10",
        },
        **HTMX,
    )
    form = response.context["form"]
    assert "exceed the amount" in form.errors["amount"][0]
    response = client.post(
        "/quotes/new/",
        {
            "base_currency": "USD",
            "quote_currency": "COP",
            "account_type": "WALLET",
            "amount_mode": "source",
            "amount": "100",
        },
        **HTMX,
    )
    assert "not enabled on the WALLET rail" in response.context["form"].errors["account_type"][0]
    html = response.content.decode()
    assert 'data-field="account_type"' in html and "not enabled on the WALLET rail" in html


def test_changing_the_amount_on_the_page_reprices(
    working_in: Environment, maker: StaffUser
) -> None:
    client = _client(maker)
    client.post(
        "/quotes/new/",
        {"base_currency": "USD", "quote_currency": "BRL", "amount_mode": "source", "amount": "100"},
    )
    quote = Quote.objects.get()
    response = client.post(f"/quotes/{quote.pk}/amount/", {"amount": "300"}, **HTMX)
    assert response.status_code == 200
    quote.refresh_from_db()
    assert quote.base_amount == 300 and quote.repriced_count == 1
    assert "300.00 USD" in response.content.decode()


def test_an_expired_quote_is_greyed_unusable_and_its_amount_cannot_change(
    live_emulator: LiveEmulator, working_in: Environment, maker: StaffUser
) -> None:
    client = _client(maker)
    client.post(
        "/quotes/new/",
        {"base_currency": "USD", "quote_currency": "BRL", "amount_mode": "source", "amount": "100"},
    )
    quote = Quote.objects.get()
    page = client.get(f"/quotes/{quote.pk}/").content.decode()
    assert "is-expired" not in page and 'data-testid="use-quote"' in page
    live_emulator.advance(601)
    # The upstream's clock says expired: the re-check learns it and the card turns grey.
    card = client.post(f"/quotes/{quote.pk}/recheck/", **HTMX).content.decode()
    assert "is-expired" in card and 'data-testid="use-quote"' not in card
    assert "Change amount" not in card
    quote.refresh_from_db()
    assert quote.status == QuoteStatus.EXPIRED
    # Our own clock reaching the expiry does the same, without asking the upstream.
    client.post(
        "/quotes/new/",
        {"base_currency": "USD", "quote_currency": "BRL", "amount_mode": "source", "amount": "100"},
    )
    other = Quote.objects.exclude(pk=quote.pk).get()
    Quote.objects.filter(pk=other.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    card = client.get(f"/quotes/{other.pk}/", **HTMX).content.decode()
    assert "is-expired" in card and "Expired" in card
    refused = client.patch(
        f"/api/v1/quotes/{other.pk}", {"amount": "150"}, content_type="application/json"
    )
    assert refused.status_code == 400 and refused.json()["code"] == "QUOTE_INVALID_STATE"


def test_the_quotes_api_creates_reads_lists_and_reprices(
    working_in: Environment, maker: StaffUser
) -> None:
    client = _client(maker)
    created = client.post(
        "/api/v1/quotes",
        {"quote_currency": "MXN", "amount": "1000"},
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["fees"]["total_fees"] == "6.00" and body["arithmetic"]["agrees"] is True
    assert body["requested_by"] == maker.email and body["usable"] is True
    got = client.get(f"/api/v1/quotes/{body['id']}").json()
    assert got["quote_id"] == body["quote_id"]
    assert [q["id"] for q in client.get("/api/v1/quotes").json()] == [body["id"]]
    patched = client.patch(
        f"/api/v1/quotes/{body['id']}", {"amount": "2000"}, content_type="application/json"
    )
    assert patched.status_code == 200 and patched.json()["base_amount"] == "2000.00"
    bad = client.post(
        "/api/v1/quotes",
        {"quote_currency": "USD", "account_type": "SPEI", "amount": "100"},
        content_type="application/json",
    )
    assert bad.status_code == 400
    [error] = bad.json()["errors"]
    assert error["field"] == "account_type" and "Valid choices: ACH, WIRE" in error["message"]
    fees = client.post(
        "/api/v1/quotes",
        {"quote_currency": "USD", "account_type": "WIRE", "amount": "10"},
        content_type="application/json",
    )
    assert fees.status_code == 400 and fees.json()["code"] == "FEES_EXCEED_AMOUNT"


@pytest.mark.parametrize("role", ["finance_approver"])
def test_readers_see_quotes_but_cannot_request_or_change_them(
    working_in: Environment, maker: StaffUser, role: str
) -> None:
    client = _client(maker)
    client.post(
        "/quotes/new/",
        {"base_currency": "USD", "quote_currency": "BRL", "amount_mode": "source", "amount": "100"},
    )
    quote = Quote.objects.get()
    reader = make_staff(role)
    from gateway.services.environments import environment_switch

    environment_switch(user=reader, environment=working_in)
    other = _client(reader)
    page = other.get(f"/quotes/{quote.pk}/")
    assert page.status_code == 200 and b"Change amount" not in page.content
    assert other.post(f"/quotes/{quote.pk}/amount/", {"amount": "5"}).status_code == 403
    assert (
        other.patch(
            f"/api/v1/quotes/{quote.pk}", {"amount": "5"}, content_type="application/json"
        ).status_code
        == 403
    )
    assert other.get("/api/v1/quotes").status_code == 200


def test_the_quote_list_costs_the_same_queries_for_one_or_many(
    working_in: Environment, maker: StaffUser
) -> None:
    client = _client(maker)
    client.post(
        "/quotes/new/",
        {"base_currency": "USD", "quote_currency": "BRL", "amount_mode": "source", "amount": "100"},
    )

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/quotes/?status=ACTIVE").status_code == 200
        return len(queries)

    one = count()
    first = Quote.objects.get()
    for index in range(10):
        Quote.objects.create(
            **{
                **{
                    f.attname: getattr(first, f.attname)
                    for f in Quote._meta.concrete_fields
                    if f.attname != "id"
                },
                "upstream_id": f"copy-{index}",
                "requested_by_id": make_staff("finance_maker").pk,
            }
        )
    assert count() == one


def test_an_upstream_that_does_not_answer_is_a_503_and_nothing_is_stored(
    live_emulator: LiveEmulator, working_in: Environment, maker: StaffUser
) -> None:
    live_emulator.faults(error_rate=1.0)
    response = _client(maker).post(
        "/api/v1/quotes", {"quote_currency": "MXN", "amount": "10"}, content_type="application/json"
    )
    assert response.status_code == 503 and response.json()["code"] == "upstream_unavailable"
    assert not Quote.objects.exists()
