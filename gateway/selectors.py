"""Gateway selectors: environments, the current environment, quota gauges, the call log."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Q, QuerySet
from django.utils import dateformat
from django.utils.translation import gettext

from gateway.models import Environment, EnvironmentKind, StaffEnvironmentChoice, UpstreamCall
from staff.roles import ENVIRONMENTS_MANAGE

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser


def environment_list() -> QuerySet[Environment]:
    return Environment.objects.order_by("-is_active", "kind", "name")


def environment_active_list() -> QuerySet[Environment]:
    return Environment.objects.filter(is_active=True).order_by("kind", "name")


def environment_choices(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Environment]:
    """
    The environments `user` is offered to work in: the verified active ones; an admin (who can
    test connections) also sees the unverified ones, marked, so they know what to test.
    """
    environments = environment_active_list()
    if user.has_perm(ENVIRONMENTS_MANAGE):  # type: ignore[union-attr]
        return environments
    return environments.filter(verified_at__isnull=False)


def environment_default() -> Environment | None:
    """Where a staff member works until they choose: the first active sandbox (oldest first)."""
    return (
        Environment.objects.filter(is_active=True, kind=EnvironmentKind.SANDBOX)
        .order_by("created_at", "pk")
        .first()
    )


def environment_current(*, user: AbstractBaseUser | AnonymousUser) -> Environment | None:
    """The environment `user` chose, if still active; else the default."""
    if user.is_authenticated:
        choice = (
            StaffEnvironmentChoice.objects.select_related("environment")
            .filter(user_id=user.pk, environment__is_active=True)
            .first()
        )
        if choice is not None:
            return choice.environment
    return environment_default()


def environment_in_use_list() -> list[Environment]:
    """The environments staff work in now: every active one a staff member chose, and the default.

    Ordered by name; each appears once. Readiness probes these and only these.
    """
    chosen = Environment.objects.filter(
        is_active=True,
        pk__in=StaffEnvironmentChoice.objects.values("environment_id"),
    )
    in_use = {environment.pk: environment for environment in chosen}
    default = environment_default()
    if default is not None:
        in_use.setdefault(default.pk, default)
    return sorted(in_use.values(), key=lambda environment: environment.name)


# --- What the upstream taught the limiter -----------------------------------------------------


@dataclass(frozen=True)
class UpstreamLimits:
    """
    What the upstream's own answers told the shared limiter about one environment, and the limits
    the gateway therefore keeps (`effective_*`: the configured ones, lowered, never raised).
    """

    rate_per_second: int | None  # RateLimit-Limit over the 1-second window (None: not heard yet)
    rate_heard_at: datetime | None
    max_concurrent: int | None  # inferred from a concurrency refusal, while it holds
    max_concurrent_until: datetime | None
    quota_limit: int | None  # RateLimit-Limit over the week, when the upstream sent it
    quota_remaining: int | None
    quota_spent_until: datetime | None  # the upstream said its weekly quota is spent
    effective_rate: int
    effective_concurrent: int

    @property
    def lowered(self) -> bool:
        return self.effective_rate_lowered or self.effective_concurrent_lowered

    effective_rate_lowered: bool = False
    effective_concurrent_lowered: bool = False


@dataclass(frozen=True)
class EnvironmentRow:
    environment: Environment
    upstream: UpstreamLimits


def _stamp(seconds: float) -> datetime | None:
    return datetime.fromtimestamp(seconds, UTC) if seconds > 0 else None


def environment_rows(*, now: float | None = None) -> list[EnvironmentRow]:
    """Every environment with what its upstream taught the limiter: one query, one store read."""
    from gateway import limiter
    from gateway.target import limits_of

    environments = list(environment_list())
    states = limiter.states([e.pk for e in environments])
    moment = now if now is not None else datetime.now(UTC).timestamp()
    rows = []
    for environment in environments:
        state = states[environment.pk]
        effective = limiter.effective(limits_of(environment), state, now=moment)
        concurrent_holds = state.learned_concurrent > 0 and state.learned_concurrent_until > moment
        rate, concurrent = effective.rate_per_second, effective.max_concurrent
        upstream = UpstreamLimits(
            rate_per_second=state.learned_rate or None,
            rate_heard_at=_stamp(state.learned_rate_at),
            max_concurrent=state.learned_concurrent if concurrent_holds else None,
            max_concurrent_until=_stamp(state.learned_concurrent_until)
            if concurrent_holds
            else None,
            quota_limit=state.quota_limit or None,
            quota_remaining=state.quota_remaining if state.quota_remaining >= 0 else None,
            quota_spent_until=_stamp(state.quota_until) if state.quota_until > moment else None,
            effective_rate=rate,
            effective_concurrent=concurrent,
            effective_rate_lowered=rate < environment.rate_per_second,
            effective_concurrent_lowered=concurrent < environment.max_concurrent,
        )
        rows.append(EnvironmentRow(environment, upstream))
    return rows


# --- Quota gauge ------------------------------------------------------------------------------

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


# --- Call log ---------------------------------------------------------------------------------

STATUS_CLASS_FILTERS = {
    "2xx": Q(status__gte=200, status__lt=300),
    "3xx": Q(status__gte=300, status__lt=400),
    "4xx": Q(status__gte=400, status__lt=500),
    "5xx": Q(status__gte=500, status__lt=600),
    "none": Q(status__isnull=True),
}


def call_log_list(
    *,
    environment: Environment | None = None,
    status_class: str = "",
    path: str = "",
    day: date | None = None,
) -> QuerySet[UpstreamCall]:
    """Calls newest first, filtered; one query per page (environment joined)."""
    calls = UpstreamCall.objects.select_related("environment").order_by("-created_at", "-id")
    if environment is not None:
        calls = calls.filter(environment=environment)
    if status_class:
        calls = calls.filter(STATUS_CLASS_FILTERS[status_class])
    if path:
        calls = calls.filter(path__icontains=path)
    if day is not None:
        start = datetime.combine(day, time.min, tzinfo=UTC)
        calls = calls.filter(created_at__gte=start, created_at__lt=start + timedelta(days=1))
    return calls


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
