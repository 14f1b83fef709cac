"""The week's upstream budget: the quota gauge per environment (used, left, by operation,
background share), its forecast, calls counted since a moment, and the budget's metrics."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Count, Q
from django.utils import dateformat
from django.utils.translation import gettext

from gateway.models import Environment, UpstreamCall
from gateway.selectors.environments import environment_active_list

# The pace of the forecast is measured over this trailing window (clipped to the ISO week), so a
# burst this morning counts more than a quiet Monday.
PACE_WINDOW = timedelta(hours=24)
BACKGROUND_PRIORITY = "background"


def iso_week_bounds(now: datetime) -> tuple[datetime, datetime]:
    """Monday 00:00 UTC of `now`'s ISO week, and the next Monday."""
    today = now.astimezone(UTC).date()
    monday = today - timedelta(days=today.isoweekday() - 1)
    start = datetime.combine(monday, time.min, tzinfo=UTC)
    return start, start + timedelta(days=7)


def _percent(part: int, whole: int) -> float:
    if whole <= 0:
        return 100.0 if part > 0 else 0.0
    return round(min(100.0, 100.0 * part / whole), 1)


@dataclass(frozen=True)
class Forecast:
    """When the weekly budget runs out at the current pace; `runs_out_at` None: not this week."""

    runs_out_at: datetime | None
    calls_per_hour: float
    text: str


def budget_forecast(
    *, now: datetime, used: int, budget: int, recent_calls: int, window_start: datetime
) -> Forecast:
    """
    Pace = calls in the trailing window / its length; the budget runs out when the remaining
    calls at that pace are spent, if that happens before the ISO week (and its budget) resets.
    """
    _, week_end = iso_week_bounds(now)
    remaining = budget - used
    window_seconds = (now - window_start).total_seconds()
    pace = recent_calls / window_seconds if window_seconds > 0 else 0.0
    per_hour = round(pace * 3600, 1)
    if remaining <= 0:
        return Forecast(now, per_hour, gettext("Budget spent: calls wait for the new week"))
    if pace <= 0:
        return Forecast(None, 0.0, gettext("Runs out: not this week"))
    runs_out_at = now + timedelta(seconds=remaining / pace)
    if runs_out_at >= week_end:
        return Forecast(None, per_hour, gettext("Runs out: not this week"))
    # The day and month names follow the reader's language (dateformat translates them).
    moment = dateformat.format(runs_out_at.astimezone(UTC), "D d M H:i")
    return Forecast(runs_out_at, per_hour, gettext("Runs out %(moment)s UTC") % {"moment": moment})


@dataclass(frozen=True)
class OperationUsage:
    operation: str
    calls: int
    percent: float  # of the busiest operation, for the bar length


@dataclass(frozen=True)
class QuotaGauge:
    """One environment's use of its weekly budget, for the dashboard."""

    environment: Environment
    week_start: datetime
    week_end: datetime
    budget: int
    used: int
    staff_calls: int
    background_calls: int
    background_budget: int
    operations: list[OperationUsage]
    forecast: Forecast

    @property
    def remaining(self) -> int:
        return max(0, self.budget - self.used)

    @property
    def used_percent(self) -> float:
        return _percent(self.used, self.budget)

    @property
    def staff_percent(self) -> float:
        return _percent(self.staff_calls, self.budget)

    @property
    def background_percent(self) -> float:
        return _percent(self.background_calls, self.budget)

    @property
    def background_share_percent(self) -> float:
        return _percent(self.background_budget, self.budget)


def quota_gauges(
    *, now: datetime, environments: list[Environment] | None = None
) -> list[QuotaGauge]:
    """
    The gauge of every active environment (or of `environments`) for `now`'s ISO week, in two
    queries whatever the number of environments and calls: the environments, and one grouped
    count of this week's calls by environment, priority and operation.
    """
    if environments is None:
        environments = list(environment_active_list())
    week_start, week_end = iso_week_bounds(now)
    window_start = max(week_start, now - PACE_WINDOW)
    by_environment = _week_counts(
        environments, week_start=week_start, week_end=week_end, window=(window_start, now)
    )
    return [
        _gauge(
            environment,
            by_environment.get(environment.pk, []),
            now=now,
            week=(week_start, week_end),
            window_start=window_start,
        )
        for environment in environments
    ]


def _week_counts(
    environments: list[Environment],
    *,
    week_start: datetime,
    week_end: datetime,
    window: tuple[datetime, datetime],
) -> dict[int, list[Any]]:
    """This week's calls grouped by environment, priority and operation (one query)."""
    rows = (
        UpstreamCall.objects.filter(
            environment__in=[e.pk for e in environments],
            created_at__gte=week_start,
            created_at__lt=week_end,
        )
        .values("environment_id", "priority", "operation")
        .annotate(
            calls=Count("id"),
            recent=Count("id", filter=Q(created_at__gte=window[0], created_at__lte=window[1])),
        )
        .order_by()
    )
    by_environment: dict[int, list[Any]] = defaultdict(list)
    for row in rows:
        by_environment[row["environment_id"]].append(row)
    return by_environment


def _operation_usage(rows: list[Any]) -> list[OperationUsage]:
    """Calls by operation, busiest first, each as a share of the busiest."""
    per_operation: dict[str, int] = defaultdict(int)
    for r in rows:
        per_operation[r["operation"] or "other"] += r["calls"]
    busiest = max(per_operation.values(), default=0)
    return [
        OperationUsage(name, calls, _percent(calls, busiest))
        for name, calls in sorted(per_operation.items(), key=lambda item: (-item[1], item[0]))
    ]


def _gauge(
    environment: Environment,
    rows: list[Any],
    *,
    now: datetime,
    week: tuple[datetime, datetime],
    window_start: datetime,
) -> QuotaGauge:
    """One environment's gauge from its grouped counts of the week."""
    used = sum(r["calls"] for r in rows)
    background = sum(r["calls"] for r in rows if r["priority"] == BACKGROUND_PRIORITY)
    budget = environment.weekly_budget
    return QuotaGauge(
        environment=environment,
        week_start=week[0],
        week_end=week[1],
        budget=budget,
        used=used,
        # Calls without a priority are counted as staff: only background work is capped.
        staff_calls=used - background,
        background_calls=background,
        background_budget=int(budget * Decimal(environment.background_share)),
        operations=_operation_usage(rows),
        forecast=budget_forecast(
            now=now,
            used=used,
            budget=budget,
            recent_calls=sum(r["recent"] for r in rows),
            window_start=window_start,
        ),
    )


def calls_since(
    *,
    environment_id: int,
    since: datetime,
    background_only: bool = False,
    operations: tuple[str, ...] = (),
) -> int:
    """
    Calls the upstream counted for one environment since `since` (call-log rows, as the gauge
    counts them), only background ones and only these operations when asked: how a background
    job paces itself against its own share of the week.
    """
    calls = UpstreamCall.objects.filter(environment_id=environment_id, created_at__gte=since)
    if background_only:
        calls = calls.filter(priority=BACKGROUND_PRIORITY)
    if operations:
        calls = calls.filter(operation__in=operations)
    return calls.count()


def budget_metrics() -> list[Any]:
    """Scrape-time gauges (console.metrics): this ISO week's budget, used and left, per active
    environment; the two queries of `quota_gauges`."""
    from django.utils import timezone
    from prometheus_client.core import GaugeMetricFamily

    budget = GaugeMetricFamily(
        "payops_upstream_budget", "Weekly request budget.", labels=["environment"]
    )
    used = GaugeMetricFamily(
        "payops_upstream_budget_used", "Requests made this ISO week.", labels=["environment"]
    )
    left = GaugeMetricFamily(
        "payops_upstream_budget_left",
        "Requests left in this ISO week's budget (0 when spent).",
        labels=["environment"],
    )
    for gauge in quota_gauges(now=timezone.now()):
        name = [gauge.environment.name]
        budget.add_metric(name, gauge.budget)
        used.add_metric(name, gauge.used)
        left.add_metric(name, max(0, gauge.budget - gauge.used))
    return [budget, used, left]
