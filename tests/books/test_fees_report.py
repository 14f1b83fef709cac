"""The fees and FX report on known payouts: each fee kind, the spread in the payouts' currency and
the recipient's, per corridor, exact to the cent; failed and returned payouts left out; the CSV;
one query whatever the number of payouts."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import date
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from books.statements.fees import fees_csv_rows, fees_report, payout_fees
from payouts.models import Payout
from tests.books.statement_fixtures import October, build_october
from tests.finance import make_environment

pytestmark = pytest.mark.django_db

D = Decimal
OCT_1, OCT_31 = date(2026, 10, 1), date(2026, 10, 31)
WIRE, SWIFT = "USD→MXN US WIRE", "USD→MXN MX SWIFT"


@pytest.fixture
def october() -> October:
    return build_october(make_environment())


def test_one_payout_figure_by_figure(october: October) -> None:
    figures = payout_fees(october.completed)
    assert (figures.fixed, figures.percentage, figures.network, figures.unitemised) == (
        D("1.50"),
        D("2.00"),
        D("0.00"),
        D("0.00"),
    )
    assert figures.total_fees == D("3.50")
    assert (figures.fx_markup_fraction, figures.penalty_fraction) == (D("0.006"), D("0.002"))
    assert (figures.rate, figures.service_rate) == (D("20.000000"), D("19.840000"))
    # spread = amount x (rate - service rate) = 100 x 0.16 = 16.00 MXN = 0.80 USD
    assert (figures.fx_markup_recipient, figures.penalty_recipient) == (D("12.00"), D("4.00"))
    assert (figures.fx_markup_usd, figures.penalty_usd, figures.spread_usd) == (
        D("0.60"),
        D("0.20"),
        D("0.80"),
    )


def test_without_a_quote_or_a_breakdown(october: October) -> None:
    figures = payout_fees(october.plain)
    assert figures.unitemised == figures.total_fees == D("5.00")
    assert (figures.rate, figures.service_rate, figures.spread_usd) == (
        D("18.000000"),
        D("18.000000"),
        D("0.00"),
    )


def test_per_corridor_leaves_out_given_back_fees(october: October) -> None:
    report = fees_report(environment=october.environment, start=OCT_1, end=OCT_31, by=None)
    assert report.corridors == [SWIFT, WIRE]
    rows = {row.corridor: row for row in report.rows}
    wire, swift = rows[WIRE], rows[SWIFT]
    assert (wire.payouts, wire.amount, wire.total_fees, wire.spread_usd) == (
        1,
        D("100.00"),
        D("3.50"),
        D("0.80"),
    )
    assert (wire.spread_recipient, wire.recipient_amount) == (D("16.00"), D("1984.00"))
    assert (swift.payouts, swift.amount, swift.unitemised, swift.total_fees) == (
        1,
        D("300.00"),
        D("5.00"),
        D("5.00"),
    )
    total = report.total
    assert (total.payouts, total.amount, total.total_fees, total.spread_usd) == (
        2,
        D("400.00"),
        D("8.50"),
        D("0.80"),
    )
    only = fees_report(
        environment=october.environment, start=OCT_1, end=OCT_31, corridor=WIRE, by=None
    )
    assert [row.corridor for row in only.rows] == [WIRE]
    assert only.corridors == [SWIFT, WIRE]  # the filter still offers every corridor
    november = fees_report(
        environment=october.environment, start=date(2026, 11, 1), end=date(2026, 11, 30), by=None
    )
    assert [row.payouts for row in november.rows] == [1]  # po-5, still processing


def test_csv_rows(october: October) -> None:
    report = fees_report(environment=october.environment, start=OCT_1, end=OCT_31, by=None)
    rows = list(fees_csv_rows(report))
    wire = next(row for row in rows if row[0] == WIRE)
    assert wire[1:12] == [
        1,
        "USD",
        D("100.00"),
        D("1.50"),
        D("2.00"),
        D("0.00"),
        D("0.00"),
        D("3.50"),
        D("0.60"),
        D("0.20"),
        D("0.80"),
    ]


def test_one_query_whatever_the_number_of_payouts(october: October) -> None:
    def run() -> int:
        with CaptureQueriesContext(connection) as captured:
            fees_report(environment=october.environment, start=OCT_1, end=OCT_31, by=None)
        return len(captured)

    before = run()
    source = Payout.objects.get(pk=october.completed.pk)
    for n in range(10):
        source.pk = None
        source.upstream_id = f"po-copy-{n}"
        source.idempotency_key = uuid.uuid4()
        source.save()
    assert run() == before == 1


def test_page_filters_and_csv(october: October, client_for) -> None:  # type: ignore[no-untyped-def]
    client = client_for("finance_approver")
    page = client.get("/books/fees/", {"start": "2026-10-01", "end": "2026-10-31"})
    assert page.status_code == 200
    assert WIRE.encode() in page.content and b"0.80 USD" in page.content
    filtered = client.get(
        "/books/fees/", {"start": "2026-10-01", "end": "2026-10-31", "corridor": SWIFT}
    )
    assert f'data-corridor="{SWIFT}"'.encode() in filtered.content
    assert f'data-corridor="{WIRE}"'.encode() not in filtered.content
    export = client.get(
        "/books/fees/", {"start": "2026-10-01", "end": "2026-10-31", "format": "csv"}
    )
    text = b"".join(export.streaming_content).decode()  # type: ignore[attr-defined]
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "Corridor" and {row[0] for row in rows[1:]} == {WIRE, SWIFT}
    api = client.get("/api/v1/books/fees", {"start": "2026-10-01", "end": "2026-10-31"})
    assert api.status_code == 200
    body = {row["corridor"]: row for row in api.json()["rows"]}
    assert D(body[WIRE]["spread_recipient"]) == D("16.00")
