"""The analytics page (/analytics/): every figure as a chart, a table and a CSV, for
books.view_books (finance makers, approvers, the auditor)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from django.contrib.auth.decorators import login_required, permission_required
from django.http import HttpRequest, HttpResponseNotFound
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils import timezone

from analytics import selectors
from analytics.forms import AnalyticsForm
from books.statements.forms import month_to_date
from console.exports import Cell, csv_response
from gateway.selectors import environment_choices
from staff.requests import staff_of
from staff.roles import BOOKS_VIEW

# Each figure: title, CSV header, rows (from the figures built below), chart kind.
FIGURES = ("volume", "outcomes", "completion", "fees", "balances", "budget")


def _money(value: Decimal) -> str:
    return str(value)


def build(period: selectors.Period, user: Any) -> dict[str, dict[str, Any]]:
    """Every figure: its table (header and rows) and its chart (labels and series)."""
    days = period.days()
    labels = [d.isoformat() for d in days]
    figures: dict[str, dict[str, Any]] = {}

    volume = selectors.volume(period=period, by=user)
    corridors = sorted({r.corridor for r in volume})
    by_key = {(r.day, r.corridor): r for r in volume}
    figures["volume"] = {
        "title": "Volume by corridor and day",
        "header": ["Day", "Corridor", "Currency", "Payouts", "Amount sent"],
        "rows": [[r.day.isoformat(), r.corridor, r.currency, r.payouts, r.amount] for r in volume],
        "chart": {
            "type": "bar",
            "stacked": True,
            "labels": labels,
            "series": [
                {
                    "label": name,
                    "data": [
                        _money(by_key[(d, name)].amount) if (d, name) in by_key else "0"
                        for d in days
                    ],
                }
                for name in corridors
            ],
        },
    }

    outcomes = selectors.outcomes(period=period, by=user)
    figures["outcomes"] = {
        "title": "Success and return rates",
        "header": ["Outcome", "Payouts", "Share (%)"],
        "rows": [[r.outcome, r.payouts, r.share] for r in outcomes],
        "chart": {
            "type": "bar",
            "labels": [r.outcome for r in outcomes],
            "series": [{"label": "Share (%)", "data": [str(r.share) for r in outcomes]}],
        },
    }

    times = selectors.completion_times(period=period, by=user)
    rows: list[list[Cell]] = [
        [r.day.isoformat(), r.payouts, r.p50_minutes, r.p95_minutes] for r in times.rows
    ]
    if times.overall is not None:
        rows.append(
            [
                "Whole period",
                times.overall.payouts,
                times.overall.p50_minutes,
                times.overall.p95_minutes,
            ]
        )
    by_day = {r.day: r for r in times.rows}
    figures["completion"] = {
        "title": "Time to complete (minutes from charge)",
        "header": ["Day charged", "Payouts completed", "p50 (minutes)", "p95 (minutes)"],
        "rows": rows,
        "chart": {
            "type": "line",
            "labels": labels,
            "series": [
                {
                    "label": name,
                    "data": [str(getattr(by_day[d], attr)) if d in by_day else None for d in days],
                }
                for name, attr in (("p50", "p50_minutes"), ("p95", "p95_minutes"))
            ],
        },
    }

    report = selectors.fees(period=period, by=user)
    figures["fees"] = {
        "title": "Fees and FX spread paid",
        "header": ["Corridor", "Payouts", "Currency", "Total fees", "FX spread"],
        "rows": [
            [r.corridor, r.payouts, r.currency, r.total_fees, r.spread_usd] for r in report.rows
        ],
        "chart": {
            "type": "bar",
            "stacked": True,
            "labels": [r.corridor for r in report.rows],
            "series": [
                {"label": "Fees", "data": [str(r.total_fees) for r in report.rows]},
                {"label": "FX spread", "data": [str(r.spread_usd) for r in report.rows]},
            ],
        },
    }

    series = selectors.balances(period=period, by=user)
    figures["balances"] = {
        "title": "Balances over time (end of day, ledger)",
        "header": ["Day", "Account", "Currency", "Balance"],
        "rows": [
            [d.isoformat(), f"{s.account.end_user} · {s.account}", s.account.currency, b]
            for s in series
            for d, b in zip(days, s.balances, strict=True)
        ],
        "chart": {
            "type": "line",
            "labels": labels,
            "series": [
                {
                    "label": f"{s.account.end_user} · {s.account}",
                    "data": [str(b) for b in s.balances],
                }
                for s in series
            ],
        },
    }

    gauges = selectors.budget_use(period=period, now=timezone.now(), by=user)
    figures["budget"] = {
        "title": "Upstream budget use this ISO week",
        "header": ["Environment", "Calls used", "Weekly budget", "Used (%)"],
        "rows": [[g.environment.name, g.used, g.budget, round(g.used_percent, 1)] for g in gauges],
        "chart": {
            "type": "bar",
            "labels": [g.environment.name for g in gauges],
            "series": [{"label": "Used (%)", "data": [round(g.used_percent, 1) for g in gauges]}],
        },
    }
    return figures


def _rows(rows: Iterable[list[Cell]]) -> Iterator[list[Cell]]:
    yield from rows


@login_required
@permission_required(BOOKS_VIEW, raise_exception=True)
def overview(request: HttpRequest) -> HttpResponseBase:
    """GET /analytics/: the figures; ?figure=<name>&format=csv downloads one figure's table."""
    user = staff_of(request)
    environments = {str(e.pk): e for e in environment_choices(user=request.user)}
    first, last = month_to_date()
    form = AnalyticsForm(
        request.GET or None,
        environments=[(k, e.name) for k, e in environments.items()],
        initial={"start": first, "end": last},
    )
    cleaned = form.cleaned_data if form.is_bound and form.is_valid() else {}
    period = selectors.Period(
        start=cleaned.get("start") or first,
        end=cleaned.get("end") or last,
        environment=environments.get(cleaned.get("environment") or ""),
    )
    figures = build(period, user)
    if request.GET.get("format") == "csv":
        name = request.GET.get("figure", "")
        if name not in figures:
            return HttpResponseNotFound("No such figure.")
        figure = figures[name]
        return csv_response(
            figure["header"],
            _rows(figure["rows"]),
            filename=f"analytics-{name}-{period.start:%Y%m%d}-{period.end:%Y%m%d}.csv",
        )
    query = request.GET.copy()
    query.pop("format", None)
    query.pop("figure", None)
    context = {
        "form": form,
        "period": period,
        "figures": [{"name": name, **figures[name]} for name in FIGURES],
        "query": query.urlencode(),
    }
    return render(request, "analytics/overview.html", context)
