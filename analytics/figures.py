"""Each figure of the analytics as a table (header, rows: what the page's table and the CSV
show) and a chart (labels and series: what static/js/charts.js draws), from analytics.selectors.
The page, its CSVs and /api/v1/analytics/{figure} all read these, so they never disagree."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext

from analytics import selectors
from console.exports import Cell
from console.templatetags.ui import money

Figure = dict[str, Any]


def _money(value: Decimal) -> str:
    return str(value)


def _sums(pairs: list[tuple[str, Decimal]]) -> str:
    """Money summed per currency, each with its currency: `1,234.56 USD · 10.00 USDC`."""
    totals: dict[str, Decimal] = {}
    for currency, amount in pairs:
        totals[currency] = totals.get(currency, Decimal(0)) + amount
    return " · ".join(money(v, c) for c, v in sorted(totals.items())) or money(Decimal(0), "USD")


def headlines(figures: list[Figure]) -> list[dict[str, str]]:
    """The page's row of headline figures, each figure's own, in the figures' order."""
    return [h for figure in figures for h in figure.get("headlines", [])]


def _labels(period: selectors.Period) -> list[str]:
    return [d.isoformat() for d in period.days()]


def _volume(period: selectors.Period, user: Any) -> Figure:
    days = period.days()
    volume = selectors.volume(period=period, by=user)
    corridors = sorted({r.corridor for r in volume})
    currencies = ", ".join(sorted({r.currency for r in volume})) or "USD"
    by_key = {(r.day, r.corridor): r for r in volume}
    return {
        "headlines": [
            {"label": gettext("Payouts charged"), "value": str(sum(r.payouts for r in volume))},
            {
                "label": gettext("Amount sent"),
                "value": _sums([(r.currency, r.amount) for r in volume]),
            },
        ],
        "title": gettext("Volume by corridor and day"),
        "header": [
            gettext("Day"),
            gettext("Corridor"),
            gettext("Currency"),
            gettext("Payouts"),
            gettext("Amount sent"),
        ],
        "rows": [[r.day.isoformat(), r.corridor, r.currency, r.payouts, r.amount] for r in volume],
        "chart": {
            "type": "bar",
            "stacked": True,
            "x_title": gettext("Day (UTC)"),
            "y_title": gettext("Amount sent (%(currency)s)") % {"currency": currencies},
            "labels": _labels(period),
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


def _outcomes(period: selectors.Period, user: Any) -> Figure:
    outcomes = selectors.outcomes(period=period, by=user)
    completed = next((r for r in outcomes if r.outcome == "Completed"), None)
    return {
        "headlines": [
            {
                "label": gettext("Success rate (completed)"),
                "value": f"{completed.share} %" if completed and completed.payouts else "—",
            }
        ],
        "title": gettext("Success and return rates"),
        "header": [gettext("Outcome"), gettext("Payouts"), gettext("Share (%)")],
        # The selector's outcomes are English words marked with gettext_noop: said here.
        "rows": [[gettext(r.outcome), r.payouts, r.share] for r in outcomes],
        "chart": {
            "type": "bar",
            "y_max": 100,
            "y_title": gettext("Share of payouts charged (%)"),
            "labels": [gettext(r.outcome) for r in outcomes],
            "series": [{"label": gettext("Share (%)"), "data": [str(r.share) for r in outcomes]}],
        },
    }


def _completion(period: selectors.Period, user: Any) -> Figure:
    days = period.days()
    times = selectors.completion_times(period=period, by=user)
    rows: list[list[Cell]] = [
        [r.day.isoformat(), r.payouts, r.p50_minutes, r.p95_minutes] for r in times.rows
    ]
    if times.overall is not None:
        rows.append(
            [
                gettext("Whole period"),
                times.overall.payouts,
                times.overall.p50_minutes,
                times.overall.p95_minutes,
            ]
        )
    by_day = {r.day: r for r in times.rows}
    overall = times.overall
    return {
        "headlines": [
            {
                "label": gettext("Median time to complete"),
                "value": gettext("%(minutes)s min") % {"minutes": overall.p50_minutes}
                if overall is not None
                else "—",
            }
        ],
        "title": gettext("Time to complete (minutes from charge)"),
        "header": [
            gettext("Day charged"),
            gettext("Payouts completed"),
            gettext("p50 (minutes)"),
            gettext("p95 (minutes)"),
        ],
        "rows": rows,
        "chart": {
            "type": "line",
            "x_title": gettext("Day charged (UTC)"),
            "y_title": gettext("Minutes from charge to completion"),
            "labels": _labels(period),
            "series": [
                {
                    "label": name,
                    "data": [str(getattr(by_day[d], attr)) if d in by_day else None for d in days],
                }
                for name, attr in (("p50", "p50_minutes"), ("p95", "p95_minutes"))
            ],
        },
    }


def _fees(period: selectors.Period, user: Any) -> Figure:
    report = selectors.fees(period=period, by=user)
    return {
        "headlines": [
            {
                "label": gettext("Fees paid"),
                "value": _sums([(r.currency, r.total_fees) for r in report.rows]),
            }
        ],
        "title": gettext("Fees and FX spread paid"),
        "header": [
            gettext("Corridor"),
            gettext("Payouts"),
            gettext("Currency"),
            gettext("Total fees"),
            gettext("FX spread"),
        ],
        "rows": [
            [r.corridor, r.payouts, r.currency, r.total_fees, r.spread_usd] for r in report.rows
        ],
        "chart": {
            "type": "bar",
            "stacked": True,
            "x_title": gettext("Corridor"),
            "y_title": gettext("Paid (%(currency)s)")
            % {"currency": ", ".join(sorted({r.currency for r in report.rows})) or "USD"},
            "labels": [r.corridor for r in report.rows],
            "series": [
                {"label": gettext("Fees"), "data": [str(r.total_fees) for r in report.rows]},
                {"label": gettext("FX spread"), "data": [str(r.spread_usd) for r in report.rows]},
            ],
        },
    }


def _balances(period: selectors.Period, user: Any) -> Figure:
    days = period.days()
    series = selectors.balances(period=period, by=user)
    return {
        "title": gettext("Balances over time (end of day, ledger)"),
        "header": [gettext("Day"), gettext("Account"), gettext("Currency"), gettext("Balance")],
        "rows": [
            [d.isoformat(), f"{s.account.end_user} · {s.account}", s.account.currency, b]
            for s in series
            for d, b in zip(days, s.balances, strict=True)
        ],
        "chart": {
            "type": "line",
            "x_title": gettext("Day (UTC)"),
            "y_title": gettext("Balance (%(currency)s)")
            % {"currency": ", ".join(sorted({s.account.currency for s in series})) or "USD"},
            "labels": _labels(period),
            "series": [
                {
                    "label": f"{s.account.end_user} · {s.account}",
                    "data": [str(b) for b in s.balances],
                }
                for s in series
            ],
        },
    }


def _budget(period: selectors.Period, user: Any) -> Figure:
    gauges = selectors.budget_use(period=period, now=timezone.now(), by=user)
    return {
        "title": gettext("Upstream budget use this ISO week"),
        "header": [
            gettext("Environment"),
            gettext("Calls used"),
            gettext("Weekly budget"),
            gettext("Used (%)"),
        ],
        "rows": [[g.environment.name, g.used, g.budget, round(g.used_percent, 1)] for g in gauges],
        "chart": {
            "type": "bar",
            # A budget is a share of 100 %: 0.4 % draws as a sliver, not a full bar.
            "y_max": 100,
            "y_title": gettext("Weekly budget used (%)"),
            "labels": [g.environment.name for g in gauges],
            "series": [
                {"label": gettext("Used (%)"), "data": [round(g.used_percent, 1) for g in gauges]}
            ],
        },
    }


# The figures in the page's order.
FIGURES: dict[str, Callable[[selectors.Period, Any], Figure]] = {
    "volume": _volume,
    "outcomes": _outcomes,
    "completion": _completion,
    "fees": _fees,
    "balances": _balances,
    "budget": _budget,
}


def figure_build(name: str, *, period: selectors.Period, by: Any) -> Figure:
    """One figure (KeyError for an unknown name): name, title, header, rows, chart."""
    return {"name": name, **FIGURES[name](period, by)}
