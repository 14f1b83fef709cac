"""Polling keeps up whatever the allowance: every read is cut to fit the pass, what waited goes
first, and whatever cannot be read within its cadence is said to be late (issue 30, item 12).

Simulated over the pure parts (plan, budget, due: tests/payouts/polling_sim.py), passes every 5
minutes as the schedule `payouts.poll` runs them, webhooks silent."""

from __future__ import annotations

import random

import pytest

from payouts.tracking.polling.due import Rules, timing
from payouts.tracking.polling.plan import plan
from tests.payouts.polling_sim import START, Week, mixed, population, simulate

PASSES_A_DAY = 288


def check_every_pass(week: Week) -> None:
    """The properties every pass keeps, whatever the count and the share."""
    for p in week.passes:
        spent = sum(q.estimate for q in p.plan.queries)
        assert spent <= p.allowance, (p.now, spent, p.allowance)  # never above the allowance
        if p.allowance >= 1 and p.plan.due:
            # Work waits and the pass may read: it reads, and the first in line is served (what
            # is read resets its due time to later than anything waiting, so none waits for ever).
            assert p.plan.queries, (p.now, p.allowance, len(p.plan.due))
            assert p.first_in_line in p.read, (p.now, p.first_in_line)
        # Every due payout is read within its cadence or reported late on health.
        assert p.plan.late == p.overdue, (p.now, len(p.plan.late), len(p.overdue))


# Open-payout counts from 0 to 5,000 and budget shares from 1 % to 20 %: a grid, and seeded
# random mixes. The window is three hours (one for thousands: a pass plans in about a second).
GRID = [(count, share, 36) for count in (0, 1, 40, 1000, 1200) for share in (0.01, 0.08, 0.2)]
_rng = random.Random(30)
SEEDED = [(_rng.randrange(0, 5001), _rng.randrange(1, 21) / 100, 12) for _ in range(2)]
CROWDED = [(5000, 0.01, 12), (5000, 0.2, 12)]


@pytest.mark.parametrize(("count", "share", "passes"), [*GRID, *SEEDED, *CROWDED])
def test_every_due_payout_is_read_in_turn_or_reported_late(
    count: int, share: float, passes: int
) -> None:
    week = simulate(mixed(count, seed=count), share=share, passes=passes)
    check_every_pass(week)


def test_the_reported_case_1000_open_payouts_at_8_percent_are_all_read() -> None:
    """The report: 1,000 open payouts in mixed states and ages, the 8 % share (9 calls a pass),
    webhooks silent. Before: one 10-page read that never fit, 0 calls in 295 passes."""
    tracked = mixed(1000, seed=8)
    rules = Rules()
    first = plan(tracked, now=START, rules=rules, population=population(tracked), allowance=9)
    assert first.queries and first.estimate <= 9
    assert all(q.estimate <= 9 for q in [*first.queries, *first.deferred])

    week = simulate(tracked, share=0.08, passes=72)  # six hours
    check_every_pass(week)
    # Every one of them was read within the six hours, and by the end none is late any more.
    assert set(week.reads) == {t.key for t in tracked}
    assert not week.passes[-1].plan.late


def test_what_cannot_be_read_in_its_cadence_is_reported_late() -> None:
    """1 % of the week is about one call an hour: 1,200 payouts cannot all be read in cadence,
    and the plan says how many are late instead of letting them wait unseen."""
    tracked = mixed(1200, seed=12)
    week = simulate(tracked, share=0.01, passes=24)
    last = week.passes[-1]
    assert last.plan.late and last.plan.late == last.overdue
    for key in last.plan.late:
        state = next(t for t in tracked if t.key == key)
        when = timing(state, now=last.now, rules=Rules())
        assert when is not None and last.now - when.due_at > when.every
