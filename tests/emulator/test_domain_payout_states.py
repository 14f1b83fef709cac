"""The payout transition table: every planned path is allowed, anything else is refused."""

from datetime import UTC, datetime
from decimal import Decimal
from itertools import pairwise

import pytest

from emulator.domain import payout_states as states
from emulator.models import Payout


@pytest.mark.parametrize("mode", ["fiat", "crypto"])
@pytest.mark.parametrize("environment", ["sandbox", "production"])
@pytest.mark.parametrize("amount", ["100.00", "100.02", "100.03", "100.04", "7.99"])
def test_every_plan_walks_allowed_transitions(mode, environment, amount):
    plan = states.outcome_plan(amount=Decimal(amount), mode=mode, environment=environment)
    assert plan[0] == states.CREATED
    for current, following in pairwise(plan):
        assert following in states.TRANSITIONS[current], (current, following)


def test_sandbox_cents_choose_the_plan():
    def plan(amount, mode="fiat"):
        return states.outcome_plan(amount=Decimal(amount), mode=mode, environment="sandbox")

    assert plan("1.00") == ["CREATED", "PENDING", "PROCESSING", "COMPLETED"]
    assert plan("1.02") == ["CREATED", "IN_REVIEW", "COMPLETED"]
    assert plan("1.03") == ["CREATED", "IN_REVIEW", "FAILED"]
    assert plan("1.04") == ["CREATED", "PENDING", "PROCESSING", "COMPLETED", "FAILED"]
    assert plan("1.00", "crypto") == ["CREATED", "KYT_PENDING", "PROCESSING", "COMPLETED"]


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("FAILED", "COMPLETED"),
        ("CANCELLED", "PENDING"),
        ("COMPLETED", "PENDING"),
        ("PROCESSING", "CREATED"),
        ("PENDING", "KYT_PENDING"),
    ],
)
def test_moves_outside_the_table_are_refused(source, target):
    payout = Payout(status=source, plan=[], events=[])
    with pytest.raises(states.IllegalTransition):
        states.move(payout, target, at=datetime.now(UTC))
    assert payout.status == source


def test_final_states_have_no_way_out():
    assert all(not states.TRANSITIONS[status] for status in states.FINAL)
    assert states.TRANSITIONS[states.COMPLETED] == frozenset({states.FAILED})
