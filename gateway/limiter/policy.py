"""The limiter's decision, a pure function over a small state shared by every process."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "starts": self.starts,
            "leases": self.leases,
            "staff_waiting": self.staff_waiting,
            "week": self.week,
            "week_count": self.week_count,
            "background_count": self.background_count,
            "paused_until": self.paused_until,
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
        )


def iso_week(now: float) -> str:
    year, week, _ = datetime.fromtimestamp(now, UTC).isocalendar()
    return f"{year}-W{week:02d}"


@dataclass(frozen=True)
class Decision:
    granted: bool
    wait: float = 0.0
    exhausted: str = ""  # non-empty: the weekly budget (or the background share) is spent


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
    window = 1.0 + limits.window_margin
    state.leases = {k: v for k, v in state.leases.items() if v > now}
    state.starts = {k: t for k, t in state.starts.items() if k in state.leases or now - t < window}
    state.staff_waiting = {k: v for k, v in state.staff_waiting.items() if v > now}
    week = iso_week(now)
    if state.week != week:
        state.week, state.week_count, state.background_count = week, 0, 0

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
    return Decision(True)


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
