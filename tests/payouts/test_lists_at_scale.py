"""Issue 21: the payout list's export and the quote list cost what a page costs, whatever the
number of rows: the export streams whole lines in chunks from one query, the quote list counts
payouts for the quotes it shows only."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from django.db import connection
from django.http import StreamingHttpResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from console.exports import CHUNK_CHARS
from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.models import Payout
from quotes.models import Quote
from staff.models import StaffUser
from tests.finance import make_draft, make_environment, make_staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def environment() -> Environment:
    return make_environment()


@pytest.fixture
def maker(environment: Environment) -> StaffUser:
    person = make_staff("finance_maker")
    environment_switch(user=person, environment=environment)
    return person


def more(first: Payout, count: int, **fields: object) -> list[Payout]:
    """`count` copies of `first` (its account and recipient), amounts 1.00 … count.00."""
    return Payout.objects.bulk_create(
        Payout(
            environment=first.environment,
            maker=first.maker,
            virtual_account=first.virtual_account,
            recipient=first.recipient,
            amount=Decimal(index + 1),
            reference=f"=cmd|' /C calc'!A{index}",
            **fields,
        )
        for index in range(count)
    )


def export(client: Client, query: str = "") -> tuple[StreamingHttpResponse, list[str], int]:
    """The response, its chunks as text, and the queries the whole download cost."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/payouts/export.csv{query}")
        assert isinstance(response, StreamingHttpResponse)
        chunks = [chunk.decode() for chunk in response.streaming_content]
    return response, chunks, len(queries)


def test_the_export_streams_whole_lines_formula_safe_in_the_same_queries(
    environment: Environment, maker: StaffUser
) -> None:
    client = Client()
    client.force_login(maker)
    first = make_draft(maker=maker, environment=environment, reference="=1+1")
    _, _, few = export(client)
    more(first, 3000)
    response, chunks, many = export(client)
    assert response["Content-Type"] == "text/csv" and many == few
    assert len(chunks) > 2  # streamed in pieces, never the whole file at once
    assert all(chunk.endswith("\r\n") for chunk in chunks)  # each piece ends a line
    assert all(len(chunk) < 2 * CHUNK_CHARS for chunk in chunks)
    rows = list(csv.DictReader(io.StringIO("".join(chunks))))
    assert len(rows) == 3001
    assert {row["reference"][:2] for row in rows} == {"'="}  # every formula made inert
    newest = rows[0]
    assert newest["recipient"] == first.recipient.display_name
    assert newest["virtual_account"] == first.virtual_account.upstream_id
    assert newest["maker"] == maker.email and newest["rail"] == "WIRE"


def test_the_export_keeps_the_lists_filters_and_its_figures(
    environment: Environment, maker: StaffUser
) -> None:
    client = Client()
    client.force_login(maker)
    first = make_draft(
        maker=maker,
        environment=environment,
        amount="250.50",
        preview_total_fees=Decimal("3.1"),
        preview_recipient_amount=Decimal("4300"),
        preview_recipient_currency="MXN",
        preview_quote_id="pq-1",
        submitted_at=timezone.now(),
        upstream_id="up-1",
    )
    more(first, 5)
    _, chunks, _ = export(client, "?amount_min=250")
    (row,) = csv.DictReader(io.StringIO("".join(chunks)))
    assert row["id"] == str(first.pk) and row["amount"] == "250.50"
    assert row["total_fees"] == "3.10" and row["recipient_amount"] == "4300.00"
    assert row["recipient_currency"] == "MXN" and row["quote_id"] == "pq-1"
    assert row["upstream_id"] == "up-1" and row["submitted_at"].startswith(
        first.submitted_at.isoformat()[:19]
    )


def test_the_payout_list_costs_the_same_queries_for_10_rows_or_many(
    environment: Environment, maker: StaffUser
) -> None:
    client = Client()
    client.force_login(maker)
    first = make_draft(maker=maker, environment=environment)
    more(first, 9)

    def count(url: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        return len(queries)

    urls = ("/payouts/", "/payouts/?status=draft&page=2", "/api/v1/payouts?offset=5")
    for url in urls:
        count(url)  # warm
    ten = [count(url) for url in urls]
    more(first, 300)
    assert [count(url) for url in urls] == ten


def test_the_quote_list_counts_payouts_of_the_quotes_shown_only(
    environment: Environment, maker: StaffUser
) -> None:
    now = timezone.now()
    figures = {
        "environment": environment,
        "requested_by": maker,
        "base_currency": "USD",
        "quote_currency": "MXN",
        "requested_amount": Decimal(100),
        "base_amount": Decimal(100),
        "quote_amount": Decimal(1700),
        "rate": Decimal(17),
        "service_rate": Decimal(17),
        "status": "USED",
        "expires_at": now,
    }
    used, unused = (
        Quote.objects.create(upstream_id="q-used", created_at=now, **figures),
        Quote.objects.create(upstream_id="q-unused", created_at=now, **figures),
    )
    first = make_draft(maker=maker, environment=environment, quote=used)
    more(first, 2, quote=used)
    client = Client()
    client.force_login(maker)

    def page() -> tuple[str, int]:
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/quotes/")
        # Payouts are read for the quotes of the page only (their ids), never joined to all.
        for query in queries:
            if "payouts_payout" in query["sql"]:
                assert " IN (" in query["sql"], query["sql"]
        return response.content.decode(), len(queries)

    html, before = page()
    assert html.count('<td class="num">3</td>') == 1 and html.count('<td class="num">0</td>') == 1
    Quote.objects.bulk_create(
        Quote(upstream_id=f"q-{i}", created_at=now, **figures) for i in range(120)
    )
    html, after = page()
    assert after == before and 'data-quote="q-119"' in html and 'data-quote="q-used"' not in html
    assert unused.pk not in [q.pk for q in Quote.objects.order_by("-created_at", "-pk")[:50]]
