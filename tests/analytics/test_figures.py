"""The analytics' figures of a seeded month (tests/books/statement_fixtures.py, October 2026),
exact; each figure's queries the same from a few payouts to many more; the page, its CSVs
(formula-safe) and who may read them."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from analytics import selectors
from analytics.selectors import Period, percentile
from payouts.models import Payout, PayoutStatusChange
from tests.books.statement_fixtures import October, at, build_october
from tests.finance import make_environment

pytestmark = pytest.mark.django_db

D = Decimal
OCT_1, OCT_31 = date(2026, 10, 1), date(2026, 10, 31)
WIRE, SWIFT, UNKNOWN = "USD→MXN US WIRE", "USD→MXN MX SWIFT", "USD→? US WIRE"
QUERY = {"start": "2026-10-01", "end": "2026-10-31"}


@pytest.fixture
def october() -> October:
    return build_october(make_environment())


def period(october: October) -> Period:
    return Period(OCT_1, OCT_31, october.environment)


def test_volume_by_corridor_and_day(october: October) -> None:
    rows = selectors.volume(period=period(october), by=None)
    assert [(r.day, r.corridor, r.payouts, r.amount) for r in rows] == [
        (date(2026, 10, 2), WIRE, 1, D("100.00")),
        (date(2026, 10, 3), WIRE, 1, D("200.04")),
        (date(2026, 10, 6), UNKNOWN, 1, D("50.00")),
        (date(2026, 10, 9), SWIFT, 1, D("300.00")),
    ]
    # po-5 was charged in November: only there.
    november = Period(date(2026, 11, 1), date(2026, 11, 30), october.environment)
    assert [(r.day, r.amount) for r in selectors.volume(period=november, by=None)] == [
        (date(2026, 11, 3), D("10.00"))
    ]


def test_outcomes(october: October) -> None:
    rows = selectors.outcomes(period=period(october), by=None)
    assert [(r.outcome, r.payouts, r.share) for r in rows] == [
        ("Completed", 2, D("50.0")),
        ("Returned", 1, D("25.0")),
        ("Failed", 1, D("25.0")),
        ("Cancelled", 0, D("0.0")),
        ("In flight", 0, D("0.0")),
    ]


def test_time_to_complete(october: October) -> None:
    # po-1 three hours, po-2 a day (completed, later returned), po-4 an hour; po-3 never completed.
    times = selectors.completion_times(period=period(october), by=None)
    assert [(r.day, r.payouts, r.p50_minutes, r.p95_minutes) for r in times.rows] == [
        (date(2026, 10, 2), 1, D("180.0"), D("180.0")),
        (date(2026, 10, 3), 1, D("1440.0"), D("1440.0")),
        (date(2026, 10, 9), 1, D("60.0"), D("60.0")),
    ]
    assert times.overall is not None
    assert (times.overall.payouts, times.overall.p50_minutes, times.overall.p95_minutes) == (
        3,
        D("180.0"),
        D("1440.0"),
    )


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(n) for n in range(1, 101)]
    assert (percentile(values, 0.5), percentile(values, 0.95)) == (50.0, 95.0)
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([], 0.5) == 0.0


def test_fees_are_the_books_figures(october: October) -> None:
    rows = {r.corridor: r for r in selectors.fees(period=period(october), by=None).rows}
    assert (rows[WIRE].total_fees, rows[WIRE].spread_usd) == (D("3.50"), D("0.80"))
    assert (rows[SWIFT].total_fees, rows[SWIFT].spread_usd) == (D("5.00"), D("0.00"))
    assert set(rows) == {WIRE, SWIFT}  # failed and returned payouts had their fees given back


def test_balances_over_time(october: October) -> None:
    [series] = selectors.balances(period=period(october), by=None)
    assert series.account == october.account
    assert len(series.balances) == 31
    assert series.balances[0] == D("1500.00")  # 500.00 opening + the 1,000.00 deposit of Oct 1
    assert series.balances[-1] == D("1115.25")  # the statement's closing


def test_budget_use_counts_this_weeks_calls(october: October) -> None:
    [gauge] = selectors.budget_use(period=period(october), now=timezone.now(), by=None)
    assert (gauge.environment, gauge.used, gauge.budget) == (
        october.environment,
        0,
        october.environment.weekly_budget,
    )


def _copies(october: October, n: int) -> None:
    """n more completed payouts like po-1, each with its two moves, on later days."""
    source = Payout.objects.get(pk=october.completed.pk)
    for i in range(n):
        source.pk = None
        source.upstream_id = f"po-copy-{i}"
        source.idempotency_key = uuid.uuid4()
        source.charged_at = at(10, 10 + i % 20)
        source.save()
        PayoutStatusChange.objects.create(
            payout=source,
            to_status="completed",
            source="event",
            at=source.charged_at + timedelta(minutes=i),
        )


FIGURES: list[Any] = [
    selectors.volume,
    selectors.outcomes,
    selectors.completion_times,
    selectors.fees,
    selectors.balances,
]


def test_each_figure_costs_the_same_queries_from_a_few_payouts_to_many(october: October) -> None:
    def counts() -> list[int]:
        result = []
        for figure in FIGURES:
            with CaptureQueriesContext(connection) as captured:
                figure(period=period(october), by=None)
            result.append(len(captured))
        return result

    few = counts()
    _copies(october, 40)
    many = counts()
    assert many == few
    assert few[:4] == [1, 1, 1, 1]
    assert selectors.outcomes(period=period(october), by=None)[0].payouts == 42


def test_page_shows_every_figure_to_finance_and_the_auditor(october: October, client_for) -> None:  # type: ignore[no-untyped-def]
    for role in ("finance_maker", "finance_approver", "auditor"):
        page = client_for(role).get("/analytics/", QUERY)
        assert page.status_code == 200, role
        body = page.content.decode()
        for name in ("volume", "outcomes", "completion", "fees", "balances", "budget"):
            assert f'id="chart-data-{name}"' in body
            assert f'data-testid="csv-{name}"' in body
        assert "1115.25" in body and "1440.0" in body and WIRE in body


def test_compliance_may_not(october: October, client_for, demo_staff) -> None:  # type: ignore[no-untyped-def]
    client = client_for("compliance")
    assert client.get("/analytics/", QUERY).status_code == 403
    assert (
        client.get("/analytics/", {**QUERY, "figure": "volume", "format": "csv"}).status_code == 403
    )
    # The selectors check it themselves, whoever calls them.
    for figure in FIGURES:
        with pytest.raises(PermissionDenied, match=r"books\.view_books"):
            figure(period=period(october), by=demo_staff["compliance"])


def test_csv_of_a_figure_is_formula_safe(october: October, client_for) -> None:  # type: ignore[no-untyped-def]
    october.account.end_user.first_name = '=HYPERLINK("http://evil.test","x")'
    october.account.end_user.save()
    response = client_for("auditor").get(
        "/analytics/", {**QUERY, "figure": "balances", "format": "csv"}
    )
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["Day", "Account", "Currency", "Balance"]
    assert rows[-1][0] == "2026-10-31" and rows[-1][3] == "1115.25"
    assert all(not row[1].startswith("=") for row in rows[1:])
    volume = client_for("auditor").get(
        "/analytics/", {**QUERY, "figure": "volume", "format": "csv"}
    )
    lines = list(csv.reader(io.StringIO(b"".join(volume.streaming_content).decode())))
    assert lines[1] == ["2026-10-02", WIRE, "USD", "1", "100.00"]
    assert (
        client_for("auditor")
        .get("/analytics/", {**QUERY, "figure": "nope", "format": "csv"})
        .status_code
        == 404
    )
