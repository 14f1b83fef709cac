"""Payouts tell open pages when they move: every transition sends one live message per reader
role, in the move's own transaction, whichever service made it."""

from __future__ import annotations

import pytest
from django.db import transaction

from console.broadcast import role_group
from console.models import LiveMessage
from payouts import live
from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.states import payout_locked, payout_transition
from staff.roles import COMPLIANCE_VIEW, FINANCE_VIEW, ROLES

pytestmark = pytest.mark.usefixtures("outbox_layer")
READERS = {
    role_group(role.key)
    for role in ROLES
    if {FINANCE_VIEW, COMPLIANCE_VIEW} & set(role.permissions)
}


def messages() -> list[tuple[str, dict[str, object]]]:
    return [(row.group, row.message["payload"]) for row in LiveMessage.objects.order_by("id")]


def test_every_transition_reaches_the_payout_readers(draft_payout: Payout) -> None:
    with transaction.atomic():
        payout_transition(
            payout_locked(draft_payout), PayoutStatus.PENDING_APPROVAL, source=ChangeSource.STAFF
        )

    sent = messages()
    assert {group for group, _ in sent} == READERS
    assert len(sent) == len(READERS)
    assert all(
        payload == {"payout_id": draft_payout.pk, "status": "pending_approval"}
        for _, payload in sent
    )


def test_a_service_announcing_the_same_move_again_sends_it_once(draft_payout: Payout) -> None:
    with transaction.atomic():
        payout = payout_locked(draft_payout)
        payout_transition(payout, PayoutStatus.PENDING_APPROVAL, source=ChangeSource.STAFF)
        live.payout_changed(payout)

    assert len(messages()) == len(READERS)


def test_a_change_that_moves_no_status_reaches_the_payout_readers_too(
    draft_payout: Payout,
) -> None:
    """A draft's edit goes through staff.actions, which announces every action on a payout:
    the maker's other open tab of the same draft re-reads it."""
    from payouts.drafts.services import DraftValues, payout_draft_update

    payout_draft_update(
        by=draft_payout.maker, payout=draft_payout, values=DraftValues(memo="Invoice 42")
    )

    sent = messages()
    assert {group for group, _ in sent} == READERS
    assert all(payload == {"payout_id": draft_payout.pk, "status": "draft"} for _, payload in sent)
