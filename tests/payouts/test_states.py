"""The payout transition table and the one function that moves a payout."""

from __future__ import annotations

import pytest

from payouts.models import ChangeSource, PayoutStatus
from payouts.states import FINAL, TRANSITIONS, IllegalTransition, can_move, payout_transition


def test_every_status_has_a_row_in_the_table() -> None:
    assert set(TRANSITIONS) == set(PayoutStatus.values)
    for targets in TRANSITIONS.values():
        assert targets <= set(PayoutStatus.values)


def test_final_states_go_nowhere_and_completed_can_still_be_returned() -> None:
    assert {PayoutStatus.FAILED, PayoutStatus.RETURNED, PayoutStatus.CANCELLED} == FINAL
    assert can_move(PayoutStatus.COMPLETED, PayoutStatus.RETURNED)


def test_a_draft_can_only_be_submitted_for_approval() -> None:
    assert TRANSITIONS[PayoutStatus.DRAFT] == {PayoutStatus.PENDING_APPROVAL}
    assert can_move(PayoutStatus.PENDING_APPROVAL, PayoutStatus.DRAFT)


@pytest.mark.django_db
def test_transition_moves_and_records_the_timeline(draft_payout) -> None:  # type: ignore[no-untyped-def]
    change = payout_transition(
        draft_payout,
        PayoutStatus.PENDING_APPROVAL,
        source=ChangeSource.STAFF,
        by=draft_payout.maker,
    )
    draft_payout.refresh_from_db()
    assert draft_payout.status == PayoutStatus.PENDING_APPROVAL
    assert draft_payout.submitted_at == change.at
    assert (change.from_status, change.to_status, change.source, change.by) == (
        "draft",
        "pending_approval",
        "staff",
        draft_payout.maker,
    )


@pytest.mark.django_db
def test_an_illegal_move_changes_nothing(draft_payout) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(IllegalTransition):
        payout_transition(draft_payout, PayoutStatus.COMPLETED, source=ChangeSource.POLL)
    draft_payout.refresh_from_db()
    assert draft_payout.status == PayoutStatus.DRAFT
    assert not draft_payout.status_changes.exists()
