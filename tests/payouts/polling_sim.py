"""A simulated week of polling over the pure parts (plan, budget, due): passes every 5 minutes,
the real allowance from the calls made, reads that tell what they cover, webhooks silent."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from payouts.tracking.polling.budget import Budget, allowance
from payouts.tracking.polling.due import Rules, Tracked, is_late, timing
from payouts.tracking.polling.plan import UPSTREAM_NAME, Plan, Population, plan

START = datetime(2026, 11, 16, 0, 5, tzinfo=UTC)  # a Monday, just after the week began
PASS = timedelta(minutes=5)  # the schedule `payouts.poll`
MIN, HOUR, DAY = timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)
STATES = ("created", "pending", "processing", "kyt_pending", "in_review", "completed")


def mixed(count: int, *, seed: int, now: datetime = START) -> list[Tracked]:
    """`count` open payouts in mixed states and ages (completed within the return watch)."""
    rng = random.Random(seed)
    found = []
    for key in range(1, count + 1):
        status = rng.choice(STATES)
        longest = 29 * DAY if status == "completed" else 10 * DAY
        entered = now - longest * rng.random()
        made = entered - rng.random() * 2 * DAY
        found.append(
            Tracked(
                key=key,
                upstream_id=f"po-{seed}-{key}",
                status=status,
                entered_at=entered,
                created_from=made,
                created_until=made + MIN,
            )
        )
    return found


def population(tracked: list[Tracked]) -> Population:
    counts = Counter((t.created_from.date(), UPSTREAM_NAME[t.status]) for t in tracked)
    return Population(counts=dict(counts))


@dataclass
class Pass:
    now: datetime
    allowance: int
    plan: Plan
    read: frozenset[int]
    overdue: frozenset[int]  # unread a whole cadence past their due time after this pass
    first_in_line: int | None  # the due payout with the earliest due time


@dataclass
class Week:
    passes: list[Pass] = field(default_factory=list)
    reads: Counter[int] = field(default_factory=Counter)


def simulate(
    tracked: list[Tracked], *, share: float, passes: int, rules: Rules | None = None
) -> Week:
    """Run `passes` passes from START; each read tells every payout it covers (nothing moves)."""
    rules = rules or Rules()
    state = {t.key: t for t in tracked}
    known = population(tracked)
    calls: list[tuple[datetime, int]] = []
    week = Week()
    for n in range(passes):
        now = START + n * PASS
        spent = [(at, c) for at, c in calls if at > now - DAY]
        room = allowance(
            Budget(
                weekly_budget=10_000,
                background_share=0.5,
                polling_share=share,
                spent_last_hour=sum(c for at, c in spent if at > now - HOUR),
                spent_last_day=sum(c for _, c in spent),
                background_this_week=sum(c for _, c in calls),
                week_left=START + 7 * DAY - now,
                max_per_pass=rules.max_per_pass,
            )
        )
        if room == 0:
            continue  # nothing can be read: the pass plans only to say what is late
        result = plan(list(state.values()), now=now, rules=rules, population=known, allowance=room)
        due = [(w.due_at, k) for k, t in state.items() if (w := timing(t, now=now, rules=rules))]
        first = min((at, k) for at, k in due if at <= now)[1] if result.due else None
        read = frozenset(key for q in result.queries for key in q.covers)
        calls.append((now, sum(q.estimate for q in result.queries)))
        for key in read:
            state[key] = replace(state[key], heard_at=now)
            week.reads[key] += 1
        overdue = frozenset(
            k
            for k, t in state.items()
            if k not in read and (w := timing(t, now=now, rules=rules)) and is_late(w, now=now)
        )
        week.passes.append(Pass(now, room, result, read, overdue, first))
    return week
