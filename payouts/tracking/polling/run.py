"""
A polling pass: gather the plan's state from the database and the call log, make the planned
reads through the gateway (background priority), and record what they told: changes applied as
`poll` (reported as missed events by `tracking`), the rest marked read, stragglers backed off.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from gateway.client import call_sync, upstream
from gateway.errors import BudgetExhausted, NotFoundError, PermanentError, UpstreamError
from gateway.models import Environment
from gateway.selectors import calls_since, iso_week_bounds
from payouts.models import ChangeSource, Payout, PayoutEvent
from payouts.tracking.events import payout_apply_report
from payouts.tracking.health import polling_late_record
from payouts.tracking.polling.budget import Budget, allowance
from payouts.tracking.polling.due import COMPLETED, MOVING, Rules, Tracked, timing
from payouts.tracking.polling.outcome import after_get, resolve
from payouts.tracking.polling.plan import (
    PAGE_SIZE,
    UPSTREAM_NAME,
    Kind,
    Population,
    Query,
    next_look,
    plan,
)
from payouts.tracking.upstream_status import StatusReport, UnreadableStatus, upstream_status

logger = logging.getLogger("payouts")

TRACKED = MOVING | {"in_review", COMPLETED}
POLL_OPERATIONS = ("payout_list", "payout_get")
DENSITY_TTL = 14 * 24 * 3600
NEXT_LOOK_TTL = 2 * 3600


def rules() -> Rules:
    return Rules(
        first=timedelta(seconds=settings.PAYOUTS_POLL_AFTER_SECONDS),
        return_watch=timedelta(days=settings.PAYOUTS_RETURN_WATCH_DAYS),
        max_per_pass=settings.PAYOUTS_POLL_MAX_CALLS_PER_PASS,
    )


def tracked_payouts(environment: Environment, *, now: datetime, rules: Rules) -> list[Tracked]:
    """The open payouts the upstream knows, with their last news (a poll, or an event received)."""
    last_event = (
        PayoutEvent.objects.filter(payout=OuterRef("pk"), source=ChangeSource.EVENT)
        .order_by("-received_at")
        .values("received_at")[:1]
    )
    rows = (
        Payout.objects.filter(environment=environment, status__in=TRACKED)
        .exclude(upstream_id=None)
        .exclude(status=COMPLETED, updated_at__lt=now - rules.return_watch)
        .annotate(last_event_at=Subquery(last_event))
        .values(
            "pk",
            "upstream_id",
            "status",
            "updated_at",
            "submitting_since",
            "last_submit_at",
            "created_at",
            "last_polled_at",
            "last_event_at",
            "poll_misses",
            "poll_missed_at",
        )
    )
    tracked = []
    for row in rows:
        start = row["submitting_since"] or row["created_at"]
        heard = [at for at in (row["last_polled_at"], row["last_event_at"]) if at is not None]
        tracked.append(
            Tracked(
                key=row["pk"],
                upstream_id=str(row["upstream_id"]),
                status=row["status"],
                entered_at=row["updated_at"],
                created_from=start,
                created_until=max(row["last_submit_at"] or start, start),
                heard_at=max(heard, default=None),
                misses=row["poll_misses"],
                missed_at=row["poll_missed_at"],
            )
        )
    return tracked


def _density_key(environment: Environment) -> str:
    return f"payouts:poll:others:{environment.pk}"


def population(environment: Environment, tracked: list[Tracked], rules: Rules) -> Population:
    """Our payouts the upstream holds by creation day and status, and what listings taught."""
    first_day = min(t.window(rules)[0] for t in tracked)
    rows = (
        Payout.objects.filter(environment=environment)
        .exclude(upstream_id=None)
        .annotate(basis=Coalesce("submitting_since", "created_at"))
        .filter(basis__gte=datetime.combine(first_day, time.min, tzinfo=UTC))
        .annotate(day=TruncDate("basis", tzinfo=UTC))
        .values("day", "status")
        .annotate(n=Count("pk"))
        .order_by()
    )
    counts: Counter[tuple[Any, str]] = Counter()
    for row in rows:
        name = UPSTREAM_NAME.get(row["status"])
        if name:
            counts[(row["day"], name)] += row["n"]
    return Population(counts=dict(counts), others_per_day=cache.get(_density_key(environment), {}))


def _polling_calls(environment: Environment, since: datetime) -> int:
    return calls_since(
        environment_id=environment.pk,
        since=since,
        background_only=True,
        operations=POLL_OPERATIONS,
    )


def budget(environment: Environment, *, now: datetime) -> Budget:
    """What polling spent lately and the week's background calls, from the call log."""
    week_start, week_end = iso_week_bounds(now)
    return Budget(
        weekly_budget=environment.weekly_budget,
        background_share=float(environment.background_share),
        polling_share=float(settings.PAYOUTS_POLL_SHARE),
        spent_last_hour=_polling_calls(environment, now - timedelta(hours=1)),
        spent_last_day=_polling_calls(environment, now - timedelta(days=1)),
        background_this_week=calls_since(
            environment_id=environment.pk, since=week_start, background_only=True
        ),
        week_left=week_end - now,
        max_per_pass=settings.PAYOUTS_POLL_MAX_CALLS_PER_PASS,
    )


class Pass:
    """One environment's reads within `room` calls, and the record of what they told."""

    def __init__(
        self, environment: Environment, tracked: list[Tracked], known: Population, room: int
    ) -> None:
        self.environment = environment
        self.client = upstream(environment, background=True)
        self.tracked = {t.key: t for t in tracked}
        self.by_upstream = {t.upstream_id: t for t in tracked}
        self.known = known
        self.room = room
        self.calls = 0
        self.applied = 0
        self.settled: set[int] = set()
        self.missing: list[int] = []
        self.refused = False  # a read the upstream refused: what it covered is still due
        self.density = dict(known.others_per_day)

    def run(self, queries: Iterable[Query]) -> bool:
        """
        The planned reads in order, then one GET per payout a listing should have shown. True
        when all of it was read; false when the allowance, the budget or the upstream stopped it.
        """
        for query in queries:
            if self.calls >= self.room or not self._guarded(self._one, query):
                return False
        for key in self.missing:
            if key in self.settled:
                continue
            if self.calls >= self.room or not self._guarded(self._read_one, key, True):
                return False
        return not self.refused

    def _guarded(self, work: Callable[..., None], *args: Any) -> bool:
        """Run one read; False when the pass must stop (budget refused, upstream in trouble)."""
        try:
            work(*args)
        except BudgetExhausted as exc:
            logger.info("payout polling of environment %s paused: %s", self.environment.pk, exc)
            return False
        except PermanentError as exc:
            self.refused = True
            logger.warning(
                "payout poll read refused (environment %s): %s", self.environment.pk, exc
            )
            return True
        except UpstreamError as exc:
            logger.warning("payout polling of environment %s stopped: %s", self.environment.pk, exc)
            return False
        return True

    def _one(self, query: Query) -> None:
        if query.kind is Kind.GET:
            self._read_one(query.covers[0], False)
            return
        seen: dict[str, dict[str, Any]] = {}
        complete = False
        try:
            complete = self._list(query, seen)
        finally:  # what the pages read so far told is kept, even when a later page failed
            self._record(query, seen, complete)

    def _list(self, query: Query, seen: dict[str, dict[str, Any]]) -> bool:
        """Page through one listing into `seen`; True when it was read to the end."""
        wanted = None
        if query.kind is not Kind.RETURNS:  # a positive read may stop once all it covers showed
            wanted = {self.tracked[key].upstream_id for key in query.covers}
        page = 1
        while self.calls < self.room:
            self.calls += 1
            listing = call_sync(
                self.client.payouts.list,
                status=query.status,
                from_date=query.from_date,
                to_date=query.to_date,
                page=page,
                limit=PAGE_SIZE,
            )
            if page == 1:
                self._learn(query, listing.total)
            seen.update((item.payout_id, item.model_dump(mode="json")) for item in listing.payouts)
            if page >= listing.total_pages or (wanted is not None and wanted <= seen.keys()):
                return True
            page += 1
        return False

    def _record(self, query: Query, seen: dict[str, dict[str, Any]], complete: bool) -> None:
        reports: dict[str, tuple[StatusReport, dict[str, Any]]] = {}
        for upstream_id, raw in seen.items():
            if upstream_id in self.by_upstream:
                try:
                    reports[upstream_id] = (upstream_status(raw), raw)
                except UnreadableStatus:
                    continue
        statuses = {upstream_id: report.status for upstream_id, (report, _) in reports.items()}
        outcome = resolve(query, seen=statuses, tracked=self.tracked, complete=complete)
        for key in outcome.changed:
            if key not in self.settled:
                report, raw = reports[self.tracked[key].upstream_id]
                self._apply(key, report, raw)
        read = [key for key in outcome.confirmed if key not in self.settled]
        Payout.objects.filter(pk__in=read).update(
            last_polled_at=timezone.now(), poll_misses=0, poll_missed_at=None
        )
        self.settled.update(read)
        self.missing += [key for key in outcome.missing if key not in self.settled]

    def _apply(self, key: int, report: StatusReport, raw: dict[str, Any]) -> None:
        """A change: applied as `poll` (tracking reports the missed event), and marked read."""
        payout = payout_apply_report(
            environment=self.environment,
            report=report,
            source=ChangeSource.POLL,
            event_type="poll",
            data=raw,
        )
        if payout is not None and payout.status == report.status:
            self.applied += 1
        # Read now, whether the table took the change or kept it as a late one; found where it
        # moved, so no straggler.
        Payout.objects.filter(pk=key).update(
            last_polled_at=timezone.now(), poll_misses=0, poll_missed_at=None
        )
        self.settled.add(key)

    def _read_one(self, key: int, listing_missed: bool) -> None:
        t = self.tracked[key]
        self.calls += 1
        report: StatusReport | None = None
        raw: dict[str, Any] = {}
        try:
            raw = call_sync(self.client.payouts.get, t.upstream_id).model_dump(mode="json")
            report = upstream_status(raw)
        except (NotFoundError, UnreadableStatus) as exc:
            logger.info("payout %s (%s) not read upstream: %s", t.key, t.upstream_id, exc)
        status = report.status if report is not None else None
        misses, missed_at = after_get(t, status, now=timezone.now(), listing_missed=listing_missed)
        if report is not None and report.status != t.status:
            self._apply(key, report, raw)
        fields: dict[str, Any] = {"poll_misses": misses, "poll_missed_at": missed_at}
        if report is not None:
            fields["last_polled_at"] = timezone.now()
        Payout.objects.filter(pk=key).update(**fields)
        self.settled.add(key)

    def _learn(self, query: Query, total: int) -> None:
        """How many payouts besides ours a listing's window holds, per day: the next estimates."""
        if query.from_date is None or query.to_date is None:
            return
        days = (query.to_date - query.from_date).days + 1
        others = max(0, total - self.known.known(query.status, query.from_date, query.to_date))
        name = query.status or ""
        earlier = self.density.get(name)
        per_day = others / days
        self.density[name] = per_day if earlier is None else (earlier + per_day) / 2

    def keep_what_was_learned(self) -> None:
        if self.density != dict(self.known.others_per_day):
            cache.set(_density_key(self.environment), self.density, DENSITY_TTL)


def _next_look_key(environment: Environment) -> str:
    return f"payouts:poll:next:{environment.pk}"


def nothing_due_yet(environment: Environment, *, now: datetime) -> bool:
    """
    The last pass said when something falls due next, and no payout changed state since that
    pass began: this one can skip loading every open payout (most passes).
    """
    saved = cache.get(_next_look_key(environment))
    if not saved:
        return False
    not_before, since = saved
    changed = Payout.objects.filter(environment=environment, updated_at__gte=since).exists()
    return now < not_before and not changed


def poll_environment(environment: Environment, *, now: datetime) -> int:
    """One pass over one environment; the number of changes applied."""
    if nothing_due_yet(environment, now=now):
        return 0
    the_rules = rules()
    tracked = tracked_payouts(environment, now=now, rules=the_rules)
    applied, all_read = 0, True
    if any((when := timing(t, now=now, rules=the_rules)) and when.due for t in tracked):
        applied, all_read = _read_due(environment, tracked, now=now, rules=the_rules)
    else:
        polling_late_record(environment, late=0, now=now)
    look = next_look(tracked, now=now, rules=the_rules, all_read=all_read)
    cache.set(_next_look_key(environment), (look, now), NEXT_LOOK_TTL)
    return applied


def _read_due(
    environment: Environment, tracked: list[Tracked], *, now: datetime, rules: Rules
) -> tuple[int, bool]:
    """Plan and make the reads; the changes applied, and whether every due payout was read."""
    room = allowance(budget(environment, now=now))
    known = population(environment, tracked, rules)
    the_plan = plan(tracked, now=now, rules=rules, population=known, allowance=room)
    work = Pass(environment, tracked, known, room)
    finished = work.run(the_plan.queries)
    work.keep_what_was_learned()
    polling_late_record(environment, late=len(the_plan.late), now=now)
    logger.info(
        "payout polling of environment %s: %d due, %d reads (%d calls of %d allowed), "
        "%d changes, %d reads wait for budget, %d payouts late",
        environment.pk,
        len(the_plan.due),
        len(the_plan.queries),
        work.calls,
        room,
        work.applied,
        len(the_plan.deferred),
        len(the_plan.late),
    )
    return work.applied, finished and not the_plan.deferred


def payouts_poll(*, environment: Environment | None = None) -> int:
    """
    The safety net behind webhooks, sized to the upstream's budget: in every environment with open
    payouts (or `environment`), read the payouts due by their state's cadence
    (`tracking.polling.plan`), with the fewest upstream calls (status filters, narrow creation
    windows, single reads for stragglers), within polling's share of the background budget; apply
    what changed (reported as missed events). Returns the number of changes applied.
    """
    now = timezone.now()
    open_ids = Payout.objects.filter(status__in=TRACKED).exclude(upstream_id=None)
    environments = Environment.objects.filter(pk__in=open_ids.values("environment_id"))
    if environment is not None:
        environments = environments.filter(pk=environment.pk)
    return sum(poll_environment(env, now=now) for env in environments)
