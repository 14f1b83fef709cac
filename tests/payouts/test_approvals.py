"""Maker-checker in the services: segregation of duties, counts, rejection, re-quote tolerance."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied

from payouts.approval.policy import approval_policy_publish
from payouts.approval.rules import RuleSpec
from payouts.approval.services import (
    payout_approve,
    payout_cancel,
    payout_reject,
    payout_requote_apply,
)
from payouts.errors import PayoutActionRefused
from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.states import payout_transition
from staff.models import AuditEntry, StaffUser
from tests.finance import make_draft, make_environment, make_recipient, make_virtual_account

S = PayoutStatus


def submit(payout: Payout) -> Payout:
    payout_transition(payout, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=payout.maker)
    return Payout.objects.get(pk=payout.pk)


def pending(staff: dict[str, StaffUser], amount: str = "100.00", maker: str = "maker") -> Payout:
    from gateway.models import Environment

    environment = Environment.objects.first() or make_environment()
    return submit(
        make_draft(
            maker=staff[maker],
            environment=environment,
            amount=amount,
            preview_recipient_amount=amount,
        )
    )


def test_maker_cannot_approve_own_payout_even_holding_the_approver_role(
    staff: dict[str, StaffUser],
) -> None:
    payout = pending(staff, maker="maker_approver")
    with pytest.raises(PayoutActionRefused) as refused:
        payout_approve(payout=payout, by=staff["maker_approver"])
    assert refused.value.code == "maker" and refused.value.status == 403
    payout.refresh_from_db()
    assert payout.status == S.PENDING_APPROVAL and not payout.approvals.exists()


def test_recipient_creator_cannot_approve_payouts_to_it(staff: dict[str, StaffUser]) -> None:
    environment = make_environment()
    account = make_virtual_account(environment)
    recipient = make_recipient(environment, account.end_user, created_by=staff["approver"])
    payout = submit(
        make_draft(
            maker=staff["maker"],
            environment=environment,
            virtual_account=account,
            recipient=recipient,
        )
    )
    with pytest.raises(PayoutActionRefused) as refused:
        payout_approve(payout=payout, by=staff["approver"])
    assert refused.value.code == "recipient_creator"
    assert payout_approve(payout=payout, by=staff["approver2"]).complete


def test_without_the_approver_permission_nobody_approves(staff: dict[str, StaffUser]) -> None:
    payout = pending(staff)
    for who in ("maker", "admin"):
        with pytest.raises(PayoutActionRefused) as refused:
            payout_approve(payout=payout, by=staff[who])
        assert refused.value.code == "not_permitted"


def test_two_approver_rule_at_or_above_10000_usd(staff: dict[str, StaffUser]) -> None:
    approval_policy_publish(
        by=staff["admin"],
        default_required=1,
        rules=[RuleSpec(required_approvals=2, min_amount=Decimal("10000"), currency="USD")],
    )
    small = pending(staff, amount="9999.99")
    assert small.approvals_required == 1
    large = pending(staff, amount="10000.00")
    assert large.approvals_required == 2 and large.approval_policy is not None

    first = payout_approve(payout=large, by=staff["approver"])
    assert not first.complete and first.payout.status == S.PENDING_APPROVAL
    with pytest.raises(PayoutActionRefused) as twice:
        payout_approve(payout=large, by=staff["approver"])
    assert twice.value.code == "already_approved"
    second = payout_approve(payout=large, by=staff["approver2"])
    assert second.complete and second.payout.status == S.APPROVED
    assert AuditEntry.objects.filter(action="payout.approved", target_id=str(large.pk)).count() == 2


def test_policy_change_applies_only_to_payouts_submitted_after_it(
    staff: dict[str, StaffUser],
) -> None:
    before = pending(staff, amount="20000.00")
    assert before.approvals_required == 1
    approval_policy_publish(
        by=staff["admin"], default_required=1, rules=[RuleSpec(required_approvals=2)]
    )
    after = pending(staff, amount="20000.00")
    assert after.approvals_required == 2
    before.refresh_from_db()
    assert before.approvals_required == 1
    assert payout_approve(payout=before, by=staff["approver"]).complete


def test_rejected_payout_goes_back_to_its_maker_with_the_reason(
    staff: dict[str, StaffUser],
) -> None:
    payout = pending(staff)
    with pytest.raises(PayoutActionRefused) as no_reason:
        payout_reject(payout=payout, by=staff["approver"], reason="  ")
    assert no_reason.value.field == "reason" and no_reason.value.status == 400
    payout_reject(payout=payout, by=staff["approver"], reason="Invoice does not match")
    payout.refresh_from_db()
    assert payout.status == S.REJECTED and payout.rejection_reason == "Invoice does not match"
    note = payout.notifications.get(recipient=staff["maker"])
    assert "Invoice does not match" in note.message
    # Back to draft, edited, resubmitted: a new round, the old approvals no longer count.
    payout_transition(payout, S.DRAFT, source=ChangeSource.STAFF, by=staff["maker"])
    payout = submit(Payout.objects.get(pk=payout.pk))
    assert payout.approval_round == 2 and payout.rejection_reason == ""


def test_maker_cannot_reject_own_payout(staff: dict[str, StaffUser]) -> None:
    payout = pending(staff, maker="maker_approver")
    with pytest.raises(PayoutActionRefused):
        payout_reject(payout=payout, by=staff["maker_approver"], reason="no")


def _approved(staff: dict[str, StaffUser], amount: str) -> Payout:
    payout = pending(staff, amount=amount)
    payout_approve(payout=payout, by=staff["approver"])
    payout.refresh_from_db()
    assert payout.approved_recipient_amount == Decimal(amount)
    return payout


def test_requote_within_the_tolerance_keeps_the_approvals(
    staff: dict[str, StaffUser], settings: object
) -> None:
    payout = _approved(staff, "1000.00")
    key = payout.idempotency_key
    payout = payout_requote_apply(
        payout=payout, by=staff["maker"], quote_id="q-2", recipient_amount=Decimal("1004.00")
    )
    assert payout.status == S.APPROVED and payout.approvals.filter(voided_at=None).count() == 1
    assert payout.idempotency_key != key  # a new body is a new request


def test_requote_outside_the_tolerance_restarts_approval(staff: dict[str, StaffUser]) -> None:
    payout = _approved(staff, "1000.00")
    payout = payout_requote_apply(
        payout=payout, by=staff["maker"], quote_id="q-3", recipient_amount=Decimal("1006.00")
    )
    assert payout.status == S.PENDING_APPROVAL and payout.approval_round == 2
    assert payout.approvals.filter(voided_at=None).count() == 0
    # The same approver may approve the new figures: a new round, a new decision.
    assert payout_approve(payout=payout, by=staff["approver"]).complete


def test_requote_stores_its_fees_and_fees_beyond_the_tolerance_restart_approval(
    staff: dict[str, StaffUser],
) -> None:
    payout = _approved(staff, "1000.00")
    Payout.objects.filter(pk=payout.pk).update(preview_total_fees=Decimal("16.00"))
    same = {"total_fees": "16.00", "network_fee": "0.20"}
    payout = payout_requote_apply(
        payout=payout,
        by=staff["maker"],
        quote_id="q-4",
        recipient_amount=Decimal("1000.00"),
        fees=same,
    )
    assert payout.status == S.APPROVED and payout.preview_fees == same
    # The recipient amount is unchanged but the fees rose 1 %: the approvers saw other figures.
    payout = payout_requote_apply(
        payout=payout,
        by=staff["maker"],
        quote_id="q-5",
        recipient_amount=Decimal("1000.00"),
        fees={"total_fees": "16.16"},
    )
    assert payout.preview_total_fees == Decimal("16.16")
    assert payout.status == S.PENDING_APPROVAL and payout.approval_round == 2


def test_cancel_before_sending_and_not_after(staff: dict[str, StaffUser]) -> None:
    payout = pending(staff)
    with pytest.raises(PermissionDenied):
        payout_cancel(payout=payout, by=staff["admin"])
    payout_cancel(payout=payout, by=staff["maker"], reason="duplicate")
    payout.refresh_from_db()
    assert payout.status == S.CANCELLED
    with pytest.raises(PayoutActionRefused):
        payout_cancel(payout=payout, by=staff["maker"])
