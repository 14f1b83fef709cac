"""
When each open payout is due for a read, and when it is late (pure): the cadence of its state
and age, its last news, the straggler backoff and a stable jitter. `plan` decides which reads
cover the due ones; a payout left unread a whole cadence past its due time is late, and the
health check `payouts_polling` says how many.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

HOUR, DAY = timedelta(hours=1), timedelta(days=1)
MOVING = frozenset({"submitting", "created", "pending", "processing", "kyt_pending"})
COMPLETED = "completed"


@dataclass(frozen=True)
class Rules:
    """The cadences and margins (settings feed `first` and `return_watch`)."""

    first: timedelta = timedelta(minutes=10)  # a payout that just moved: webhooks first
    return_watch: timedelta = timedelta(days=30)  # completed payouts watched this long
    ripe_share: float = 0.5  # a payout this far into its cadence joins a due neighbour's read
    jitter_share: float = 0.1  # each payout's due time is spread by up to this share
    straggler_base: timedelta = timedelta(minutes=30)
    straggler_cap: timedelta = DAY
    clock_margin: timedelta = HOUR  # our clock against the upstream's around a creation time
    gap_days: int = 1  # creation windows at most this many days apart are read together
    max_per_pass: int = 10  # a listing estimated above this is split by date


# Cadence by state and by how long the payout has been in it: (younger than, read every).
# `None` is "the rest of its life"; the first tier of a moving payout is `Rules.first`.
_IN_REVIEW = ((DAY, HOUR), (7 * DAY, 4 * HOUR), (None, 12 * HOUR))
_MOVING_LATER = ((6 * HOUR, timedelta(minutes=30)), (DAY, HOUR), (7 * DAY, 6 * HOUR), (None, DAY))


def cadence(status: str, age: timedelta, rules: Rules) -> timedelta | None:
    """How often a payout in `status` for `age` is read; None: not watched (any more)."""
    if status == COMPLETED:  # only a return can follow: a twice-daily sweep while it may come
        return 12 * HOUR if age < rules.return_watch else None
    tiers: tuple[tuple[timedelta | None, timedelta], ...]
    if status == "in_review":  # a person upstream decides: hours, not minutes
        tiers = _IN_REVIEW
    elif status in MOVING:  # the next step is due within minutes; the longer it waits the rarer
        tiers = ((HOUR, rules.first), *_MOVING_LATER)
    else:
        return None
    return next(every for limit, every in tiers if limit is None or age < limit)


def straggler_delay(misses: int, rules: Rules) -> timedelta:
    """After `misses` reads that did not find a payout, wait this long before the next one."""
    if misses <= 0:
        return timedelta(0)
    return min(rules.straggler_cap, rules.straggler_base * 2 ** min(misses - 1, 16))


def jitter(upstream_id: str) -> float:
    """A stable fraction in [0, 1) for this payout: due times spread without any randomness."""
    digest = hashlib.blake2b(upstream_id.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") / 2**32


@dataclass(frozen=True)
class Tracked:
    """One open payout as the plan sees it."""

    key: int
    upstream_id: str
    status: str
    entered_at: datetime  # when it reached `status`
    created_from: datetime  # bounds of the upstream's creation time, by our clock
    created_until: datetime
    heard_at: datetime | None = None  # the last poll that read it, or the last event received
    misses: int = 0  # reads in a row that did not find it where it should be
    missed_at: datetime | None = None

    @property
    def news_at(self) -> datetime:
        return max(self.entered_at, self.heard_at or self.entered_at)

    def window(self, rules: Rules) -> tuple[date, date]:
        return (
            (self.created_from - rules.clock_margin).date(),
            (max(self.created_until, self.created_from) + rules.clock_margin).date(),
        )


@dataclass(frozen=True)
class Timing:
    every: timedelta
    due_at: datetime
    due: bool
    ripe: bool
    urgency: float  # time since news over the cadence: the most overdue goes first


def timing(t: Tracked, *, now: datetime, rules: Rules) -> Timing | None:
    """When `t` is due (None: not watched any more)."""
    every = cadence(t.status, now - t.entered_at, rules)
    if every is None:
        return None
    quiet = now - t.news_at
    due_at = t.news_at + every + every * rules.jitter_share * jitter(t.upstream_id)
    if t.misses and t.missed_at is not None:
        due_at = max(due_at, t.missed_at + straggler_delay(t.misses, rules))
    seconds = max(every.total_seconds(), 1.0)
    return Timing(
        every=every,
        due_at=due_at,
        due=now >= due_at,
        ripe=not t.misses and quiet >= every * rules.ripe_share,
        urgency=quiet.total_seconds() / seconds,
    )


def is_late(when: Timing, *, now: datetime) -> bool:
    """Unread a whole cadence past its due time: polling is not keeping up with this payout."""
    return when.due and now - when.due_at > when.every


def late(tracked: Iterable[Tracked], *, now: datetime, rules: Rules) -> frozenset[int]:
    """The payouts that are late now (see `is_late`)."""
    found = set()
    for t in tracked:
        when = timing(t, now=now, rules=rules)
        if when is not None and is_late(when, now=now):
            found.add(t.key)
    return frozenset(found)
