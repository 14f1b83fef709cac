"""The limiter's decision, a pure function over a small state shared by every process."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any


class Priority(enum.StrEnum):
    """Staff-initiated calls go first; background work yields and stops at its budget share."""

    STAFF = "staff"
    BACKGROUND = "background"


@dataclass(frozen=True)
class Limits:
    rate_per_second: int
    max_concurrent: int
    weekly_budget: int
    background_share: float
    window_margin: float = 0.005


@dataclass
class LimiterState:
    """
    What every process must agree on. `starts` are the last calls by caller (a sliding log: at
    most `rate_per_second` of them in any window), stamped with the moment each one ENDED: the
    upstream counted it at some instant between our send and its answer, and only the answer's
    time bounds that instant from above whatever the scheduling delays of a busy machine. A call
    still in flight counts as "now". `leases` the calls in flight with their
    expiry (a crashed caller's slot frees itself), `staff_waiting` staff callers queued with expiry
    (background calls hold back while any wait), `paused_until` what the upstream's own headers
    told us (Retry-After, RateLimit-Remaining: 0).
    """

    starts: dict[str, float] = field(default_factory=dict)
    leases: dict[str, float] = field(default_factory=dict)
    staff_waiting: dict[str, float] = field(default_factory=dict)
    week: str = ""
    week_count: int = 0
    background_count: int = 0
    paused_until: float = 0.0
    # What the upstream taught us (0: nothing yet). See `observe`.
    learned_rate: int = 0
    learned_rate_at: float = 0.0
    learned_concurrent: int = 0
    learned_concurrent_until: float = 0.0
    quota_limit: int = 0
    quota_remaining: int = -1
    quota_until: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "starts": self.starts,
            "leases": self.leases,
            "staff_waiting": self.staff_waiting,
            "week": self.week,
            "week_count": self.week_count,
            "background_count": self.background_count,
            "paused_until": self.paused_until,
            "learned_rate": self.learned_rate,
            "learned_rate_at": self.learned_rate_at,
            "learned_concurrent": self.learned_concurrent,
            "learned_concurrent_until": self.learned_concurrent_until,
            "quota_limit": self.quota_limit,
            "quota_remaining": self.quota_remaining,
            "quota_until": self.quota_until,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> LimiterState:
        if not data:
            return cls()
        return cls(
            starts={str(k): float(v) for k, v in dict(data.get("starts") or {}).items()},
            leases={str(k): float(v) for k, v in data.get("leases", {}).items()},
            staff_waiting={str(k): float(v) for k, v in data.get("staff_waiting", {}).items()},
            week=str(data.get("week", "")),
            week_count=int(data.get("week_count", 0)),
            background_count=int(data.get("background_count", 0)),
            paused_until=float(data.get("paused_until", 0.0)),
            learned_rate=int(data.get("learned_rate", 0)),
            learned_rate_at=float(data.get("learned_rate_at", 0.0)),
            learned_concurrent=int(data.get("learned_concurrent", 0)),
            learned_concurrent_until=float(data.get("learned_concurrent_until", 0.0)),
            quota_limit=int(data.get("quota_limit", 0)),
            quota_remaining=int(data.get("quota_remaining", -1)),
            quota_until=float(data.get("quota_until", 0.0)),
        )


def iso_week(now: float) -> str:
    year, week, _ = datetime.fromtimestamp(now, UTC).isocalendar()
    return f"{year}-W{week:02d}"


@dataclass(frozen=True)
class Decision:
    granted: bool
    wait: float = 0.0
    exhausted: str = ""  # non-empty: the weekly budget (or the background share) is spent
    in_flight: int = 0  # granted: our calls in flight, this one included (for `observe`)


def effective(limits: Limits, state: LimiterState, *, now: float) -> Limits:
    """
    The limits to keep: the configured ones, lowered to what the upstream taught us. Never raised
    above the configuration (an upstream saying 20/s does not license more than we were given).
    A learned concurrency is only an inference from a refusal, so it lapses (`learned_concurrent
    _until`) and the configured value is tried again; the learned rate is restated by every answer.
    """
    rate, concurrent = limits.rate_per_second, limits.max_concurrent
    if state.learned_rate > 0:
        rate = min(rate, state.learned_rate)
    if state.learned_concurrent > 0 and state.learned_concurrent_until > now:
        concurrent = min(concurrent, state.learned_concurrent)
    return replace(limits, rate_per_second=rate, max_concurrent=concurrent)


def decide(
    state: LimiterState,
    *,
    now: float,
    limits: Limits,
    priority: Priority,
    caller: str,
    lease_seconds: float,
) -> Decision:
    """Grant a slot to `caller` (mutating `state`) or say how long to wait, or that none is left."""
    limits = effective(limits, state, now=now)
    window = 1.0 + limits.window_margin
    state.leases = {k: v for k, v in state.leases.items() if v > now}
    state.starts = {k: t for k, t in state.starts.items() if k in state.leases or now - t < window}
    state.staff_waiting = {k: v for k, v in state.staff_waiting.items() if v > now}
    week = iso_week(now)
    if state.week != week:
        state.week, state.week_count, state.background_count = week, 0, 0

    if state.quota_until > now:
        hours = (state.quota_until - now) / 3600
        return Decision(
            False,
            wait=state.quota_until - now,
            exhausted=f"the upstream's weekly quota is spent (resets in about {hours:.0f} h)",
        )
    if state.week_count >= limits.weekly_budget:
        return Decision(False, exhausted=f"weekly budget of {limits.weekly_budget} calls spent")
    if priority is Priority.BACKGROUND:
        share = int(limits.weekly_budget * limits.background_share)
        if state.background_count >= share:
            return Decision(False, exhausted=f"background share of {share} weekly calls spent")

    waits: list[float] = []
    if state.paused_until > now:
        waits.append(state.paused_until - now)
    if len(state.starts) >= limits.rate_per_second:
        stamps = sorted(now if k in state.leases else t for k, t in state.starts.items())
        oldest = stamps[-limits.rate_per_second]
        # An in-flight call ends at an unknown time: poll briefly rather than wait a window.
        waits.append(0.02 if oldest >= now else oldest + window - now)
    if len(state.leases) >= limits.max_concurrent:
        waits.append(0.02)  # a lease frees when a call ends; poll briefly
    if priority is Priority.BACKGROUND and state.staff_waiting:
        waits.append(0.05)
    if waits:
        if priority is Priority.STAFF:
            state.staff_waiting[caller] = now + 2.0
        return Decision(False, wait=max(0.005, max(waits)))

    state.staff_waiting.pop(caller, None)
    state.starts[caller] = now
    state.leases[caller] = now + lease_seconds
    state.week_count += 1
    if priority is Priority.BACKGROUND:
        state.background_count += 1
    return Decision(True, in_flight=len(state.leases))


def release(state: LimiterState, *, caller: str, now: float, linger: float = 0.0) -> None:
    """
    End a call at `now`: its rate stamp becomes its end time, and its concurrency lease lingers
    `linger` seconds, since the upstream counts a request in flight until its own teardown after
    the last byte we read (a slot reused at once could be its third "at once").
    """
    if caller in state.starts:
        state.starts[caller] = now
    if caller in state.leases and linger > 0:
        state.leases[caller] = now + linger
    else:
        state.leases.pop(caller, None)
    state.staff_waiting.pop(caller, None)


def pause(state: LimiterState, *, until: float) -> None:
    state.paused_until = max(state.paused_until, until)


def renew(state: LimiterState, *, caller: str, now: float, lease_seconds: float) -> None:
    """
    A call still really in flight extends its lease. Leases are short so that a killed process
    frees its slot within `lease_seconds`; the living one renews well before that. A lease that
    lapsed meanwhile (a stalled process) is taken again: the request is in flight whatever our
    bookkeeping said, and counting it keeps the next grants honest.
    """
    state.leases[caller] = max(state.leases.get(caller, 0.0), now + lease_seconds)
    if caller not in state.starts:
        state.starts[caller] = now


def cancel(state: LimiterState, *, caller: str, priority: Priority) -> None:
    """Give back a grant that sent nothing (no token yet, connection refused): no count, no slot."""
    if state.leases.pop(caller, None) is not None:
        state.week_count = max(0, state.week_count - 1)
        if priority is Priority.BACKGROUND:
            state.background_count = max(0, state.background_count - 1)
    state.starts.pop(caller, None)
    state.staff_waiting.pop(caller, None)


# --- What the upstream's answers teach ----------------------------------------------------------

# interface.md section 8 knows two windows: the rate's one second and the quota's week. A window
# whose reset lies beyond one second is the quota's.
RATE_WINDOW_SECONDS = 1.0


class Refusal(enum.StrEnum):
    NONE = "none"  # not a 429
    RATE = "rate"  # too many in the 1-second window: wait Retry-After, everyone
    CONCURRENCY = "concurrency"  # the window had room: too many at once
    QUOTA = "quota"  # the week's quota: nothing to wait for


@dataclass(frozen=True)
class Answer:
    """The limit headers of one answer (None where absent or unreadable)."""

    status: int
    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None
    retry_after: float | None = None

    @classmethod
    def from_headers(cls, status: int, headers: Mapping[str, str]) -> Answer:
        def number(name: str) -> float | None:
            value = headers.get(name)
            try:
                return float(value) if value is not None else None
            except ValueError:
                return None

        limit, remaining = number("ratelimit-limit"), number("ratelimit-remaining")
        return cls(
            status=status,
            limit=int(limit) if limit is not None else None,
            remaining=int(remaining) if remaining is not None else None,
            reset=number("ratelimit-reset"),
            retry_after=number("retry-after"),
        )

    @property
    def long_window(self) -> bool:
        """The headers speak of the quota's window, not the rate's."""
        return self.reset is not None and self.reset > RATE_WINDOW_SECONDS

    @property
    def refusal(self) -> Refusal:
        if self.status != 429:
            return Refusal.NONE
        wait = self.retry_after if self.retry_after is not None else self.reset
        if self.long_window or (wait is not None and wait > RATE_WINDOW_SECONDS):
            return Refusal.QUOTA
        if self.remaining is not None and self.remaining > 0:
            return Refusal.CONCURRENCY
        return Refusal.RATE

    @property
    def wait(self) -> float:
        """How long this answer asks us to hold off (0: not at all)."""
        if self.status == 429:
            return self.retry_after or self.reset or RATE_WINDOW_SECONDS
        if self.long_window and self.remaining is not None and self.remaining <= 0:
            return float(self.reset or 0.0)
        return 0.0


def observe(
    state: LimiterState, answer: Answer, *, now: float, in_flight: int, learn_for: float
) -> Refusal:
    """
    Learn from one answer (mutating `state`) and say what kind of refusal it was.

    - `RateLimit-Limit` over the 1-second window is the upstream's real rate: kept as
      `learned_rate` (so an environment set to 10/s against an upstream at 5/s runs at 5/s, not
      at a fifth of it under 429 pauses). Over a longer window it is the weekly quota.
    - A 429 while the window still had room (`Remaining` > 0) refused concurrency: with
      `in_flight` of our calls at once (this one included) the upstream's limit is below that,
      so `in_flight - 1` (at least 1) is kept for `learn_for` seconds, then the configured one is
      tried again. No pause for everyone: the calls in flight are not refused.
    - A 429 over the 1-second window pauses every process for Retry-After.
    - The quota spent (a 429 or `Remaining: 0` over a long window) stops everyone until its reset:
      `decide` then answers "exhausted" at once instead of letting callers sleep for days.
    """
    if answer.limit is not None and answer.limit > 0:
        if answer.long_window:
            state.quota_limit = answer.limit
        else:
            state.learned_rate, state.learned_rate_at = answer.limit, now
    if answer.long_window and answer.remaining is not None:
        state.quota_remaining = max(0, answer.remaining)
    kind = answer.refusal
    if kind is Refusal.CONCURRENCY:
        state.learned_concurrent = max(1, in_flight - 1)
        state.learned_concurrent_until = now + learn_for
    elif kind is Refusal.RATE:
        pause(state, until=now + answer.wait)
    wait = answer.wait
    if kind is Refusal.QUOTA or (answer.long_window and wait > 0):
        state.quota_until = max(state.quota_until, now + wait)
        state.quota_remaining = 0
    return kind
