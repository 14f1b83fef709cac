"""
The polling plan, a pure decision over explicit state (like the limiter's `decide`): which
upstream reads cover the payouts due now (`due`: how often each is read, and when it is late) for
the fewest calls, each read cut to fit the pass's allowance (`budget.allowance`). `run` gathers
the state and makes the reads; `outcome` says what each read told.

The reads (decisions.md 2): `GET /v1/payouts?status=&from_date=&to_date=&page=&limit=100` (dates
filter on the upstream's creation day) and `GET /v1/payouts/{id}`. Four kinds of query:

- WINDOW: every status over a few creation days. Conclusive for every open payout created then
  (a payout it does not show is missing); the cheapest cover of fresh payouts in mixed states.
- STATUS: one status over a window. Conclusive for payouts still in that status; those it does
  not show have moved (or are never listed) and are read one by one.
- RETURNS: `status=FAILED` over the creation days of completed payouts. A completed payout can
  only become FAILED (a return, decisions.md 3), so one not shown is still completed: a few pages
  watch hundreds of completed payouts without listing them.
- GET: one payout, for stragglers and for a due payout too lonely to be worth a listing.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime

from payouts.tracking.polling.due import (
    COMPLETED,
    HOUR,
    Rules,
    Timing,
    Tracked,
    is_late,
    timing,
)

PAGE_SIZE = 100  # the upstream's largest `limit`

# Our open states, as the upstream's list filter spells them (`submitting` with an upstream id is
# a moment between the answer and its record: it has no upstream name and is read by WINDOW/GET).
UPSTREAM_NAME = {
    "created": "CREATED",
    "pending": "PENDING",
    "processing": "PROCESSING",
    "in_review": "IN_REVIEW",
    "kyt_pending": "KYT_PENDING",
    "completed": "COMPLETED",
    "failed": "FAILED",
    "returned": "FAILED",  # a return is FAILED upstream
    "cancelled": "CANCELLED",
}


class Kind(enum.StrEnum):
    WINDOW = "window"
    STATUS = "status"
    RETURNS = "returns"
    GET = "get"


@dataclass(frozen=True)
class Population:
    """
    How many payouts the upstream holds per creation day and upstream status: ours as we know
    them (`counts`), plus per day what earlier listings taught about the others (`others_per_day`
    by upstream status; "" for all statuses together).
    """

    counts: Mapping[tuple[date, str], int] = field(default_factory=dict)
    others_per_day: Mapping[str, float] = field(default_factory=dict)

    def known(self, status: str | None, start: date, end: date) -> int:
        return sum(
            n
            for (day, name), n in self.counts.items()
            if start <= day <= end and (status is None or name == status)
        )

    def estimate(self, status: str | None, start: date, end: date) -> int:
        days = (end - start).days + 1
        if status is None and "" not in self.others_per_day:
            per_day = sum(self.others_per_day.values())
        else:
            per_day = self.others_per_day.get(status or "", 0.0)
        return self.known(status, start, end) + math.ceil(per_day * days)


def pages(count: int) -> int:
    return max(1, math.ceil(count / PAGE_SIZE))


@dataclass(frozen=True)
class Query:
    kind: Kind
    covers: tuple[int, ...]  # tracked payouts this read tells about when it completes
    due: tuple[int, ...]  # the due ones among them
    estimate: int  # calls
    urgency: float = 0.0
    oldest_news: datetime | None = None
    oldest_due: datetime | None = None  # the earliest due time among `due`: it orders the reads
    status: str | None = None  # the upstream's name, for STATUS and RETURNS ("FAILED")
    from_date: date | None = None
    to_date: date | None = None
    upstream_id: str = ""  # GET


@dataclass(frozen=True)
class Plan:
    queries: tuple[Query, ...]  # to run now, in this order
    deferred: tuple[Query, ...]  # due but beyond the allowance: first in line next pass
    due: frozenset[int]
    # Unread a whole cadence past their due time and not read by this pass: the health check says
    # how many (polling's allowance cannot keep up with them).
    late: frozenset[int] = frozenset()

    @property
    def estimate(self) -> int:
        return sum(q.estimate for q in self.queries)


@dataclass(frozen=True)
class _Entry:
    t: Tracked
    timing: Timing
    start: date
    end: date


def _matches(kind: Kind, status: str | None, entry: _Entry) -> bool:
    if kind is Kind.WINDOW:
        return True
    if kind is Kind.RETURNS:
        return entry.t.status == COMPLETED
    return UPSTREAM_NAME.get(entry.t.status) == status


def _query(
    kind: Kind,
    covers: Sequence[_Entry],
    estimate: int,
    *,
    status: str | None = None,
    span: tuple[date, date] | None = None,
    upstream_id: str = "",
) -> Query:
    due = [e for e in covers if e.timing.due]
    return Query(
        kind=kind,
        covers=tuple(e.t.key for e in covers),
        due=tuple(e.t.key for e in due),
        estimate=estimate,
        urgency=max((e.timing.urgency for e in due), default=0.0),
        oldest_news=min((e.t.news_at for e in due), default=None),
        oldest_due=min((e.timing.due_at for e in due), default=None),
        status=status,
        from_date=span[0] if span else None,
        to_date=span[1] if span else None,
        upstream_id=upstream_id,
    )


def _get(entry: _Entry) -> Query:
    return _query(Kind.GET, [entry], 1, upstream_id=entry.t.upstream_id)


def _listings(
    kind: Kind,
    status: str | None,
    members: Sequence[_Entry],
    pool: Sequence[_Entry],
    population: Population,
    rules: Rules,
) -> list[Query]:
    """
    One listing over the members' creation days covering every payout of `pool` it shows; split
    (by members, so none falls between two halves) while it would take more than the pass may
    make (`rules.max_per_pass`, already cut to the pass's allowance). A part without a due payout
    waits for its own turn; one payout's window still too long for the pass is read by GET.
    """
    if not any(e.timing.due for e in members):
        return []
    start, end = min(e.start for e in members), max(e.end for e in members)
    estimate = pages(population.estimate(status, start, end))
    if estimate > rules.max_per_pass and len(members) == 1:
        return [_get(members[0])]
    if estimate > rules.max_per_pass:
        ordered = sorted(members, key=lambda e: (e.start, e.end))
        half = len(ordered) // 2
        return [
            *_listings(kind, status, ordered[:half], pool, population, rules),
            *_listings(kind, status, ordered[half:], pool, population, rules),
        ]
    covers = [e for e in pool if start <= e.start and e.end <= end and _matches(kind, status, e)]
    return [_query(kind, covers, estimate, status=status, span=(start, end))]


def _clusters(entries: Iterable[_Entry], rules: Rules) -> list[list[_Entry]]:
    """Entries whose creation windows overlap or lie within `gap_days` of each other."""
    groups: list[list[_Entry]] = []
    end: date | None = None
    for entry in sorted(entries, key=lambda e: (e.start, e.end)):
        if end is None or (entry.start - end).days > rules.gap_days:
            groups.append([])
            end = entry.end
        groups[-1].append(entry)
        end = max(end, entry.end)
    return groups


def _cheapest(*options: list[Query] | None, singles: Sequence[_Entry]) -> list[Query]:
    """The option with the fewest calls; on a tie the first (the one that tells the most). One
    GET per due payout of `singles` comes last, and is only built when it is the cheapest."""
    usable = [option for option in options if option is not None]
    best = min(usable, key=lambda queries: sum(q.estimate for q in queries))
    due = [e for e in singles if e.timing.due]
    if len(due) < sum(q.estimate for q in best):
        return [_get(e) for e in due]
    return best


def _cover_active(
    group: list[_Entry], pool: list[_Entry], population: Population, rules: Rules
) -> list[Query]:
    """Payouts on their way: every status at once, each status apart, or one by one."""
    window = _listings(Kind.WINDOW, None, group, pool, population, rules)
    statuses = {e.t.status for e in group}
    by_status: list[Query] | None = None
    if statuses <= set(UPSTREAM_NAME):
        by_status = [
            query
            for status in sorted(statuses)
            for query in _listings(
                Kind.STATUS,
                UPSTREAM_NAME[status],
                [e for e in group if e.t.status == status],
                pool,
                population,
                rules,
            )
        ]
    return _cheapest(window, by_status, singles=group)


def _cover_returns(
    group: list[_Entry], pool: list[_Entry], population: Population, rules: Rules
) -> list[Query]:
    """Completed payouts: their returns listed (FAILED), or read one by one."""
    returns = _listings(Kind.RETURNS, "FAILED", group, pool, population, rules)
    return _cheapest(returns, singles=group)


def plan(
    tracked: Sequence[Tracked],
    *,
    now: datetime,
    rules: Rules,
    population: Population,
    allowance: int,
) -> Plan:
    """
    Which reads to make now, within `allowance` calls. A due payout pulls into its read every
    payout past `ripe_share` of its cadence whose creation days are near (one read for many, and
    the next ones fall due together); the rest of what the read shows is refreshed too.

    Every read is cut to fit the pass (a listing split by payouts, down to single GETs), so
    whatever the allowance, the first read in line always fits. Reads go in the order of their
    earliest due time, the most overdue (by its cadence) first among equals: what waited has an
    earlier due time than anything that fell due since, so it goes first the next pass, and no
    read waits for ever. Due payouts left unread a whole cadence past their due time are `late`.
    """
    rules = replace(rules, max_per_pass=max(1, min(rules.max_per_pass, allowance)))
    entries = []
    for t in tracked:
        when = timing(t, now=now, rules=rules)
        if when is not None:
            entries.append(_Entry(t, when, *t.window(rules)))
    queries = [_get(e) for e in entries if e.t.misses and e.timing.due]
    listable = [e for e in entries if not e.t.misses]
    active = [e for e in listable if e.t.status != COMPLETED]
    for group in _clusters((e for e in active if e.timing.due or e.timing.ripe), rules):
        queries += _cover_active(group, listable, population, rules)
    told = {key for q in queries if q.kind is Kind.WINDOW for key in q.covers}
    completed = [e for e in listable if e.t.status == COMPLETED and e.t.key not in told]
    for group in _clusters((e for e in completed if e.timing.due or e.timing.ripe), rules):
        queries += _cover_returns(group, completed, population, rules)
    queries.sort(key=lambda q: (q.oldest_due or now, -q.urgency, q.oldest_news or now))
    chosen, deferred = _within(queries, allowance)
    read = {key for q in chosen for key in q.covers}
    return Plan(
        queries=chosen,
        deferred=deferred,
        due=frozenset(e.t.key for e in entries if e.timing.due),
        late=frozenset(
            e.t.key for e in entries if is_late(e.timing, now=now) and e.t.key not in read
        ),
    )


def _within(
    queries: Iterable[Query], allowance: int
) -> tuple[tuple[Query, ...], tuple[Query, ...]]:
    """The reads that fit the allowance, in order, and those that wait."""
    chosen: list[Query] = []
    deferred: list[Query] = []
    spent = 0
    for query in queries:
        if spent + query.estimate <= allowance:
            chosen.append(query)
            spent += query.estimate
        else:
            deferred.append(query)
    return tuple(chosen), tuple(deferred)


def next_look(
    tracked: Sequence[Tracked], *, now: datetime, rules: Rules, all_read: bool
) -> datetime:
    """
    The earliest moment a later pass can find a payout due, if none changes state meanwhile (a
    state entered restarts its cadence: the caller looks again then). Those due now and read
    this pass are due one cadence on at the soonest; when some due work was left (`all_read`
    false), now. At most an hour on, so that a changed setting is soon heeded.
    """
    if not all_read:
        return now
    soonest = now + HOUR
    for t in tracked:
        when = timing(t, now=now, rules=rules)
        if when is not None:
            soonest = min(soonest, now + when.every if when.due else when.due_at)
    return soonest
