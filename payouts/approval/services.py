"""Maker-checker writes: approve, reject, re-quote (keep or void approvals), cancel."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from accounts.recipients import recipient_not_payable_reason
from console.sentences import summary
from gateway import idempotency
from payouts.approval import notifications
from payouts.approval.policy import approver_roles
from payouts.approval.rules import (
    ApprovalFacts,
    Refusal,
    approval_decide,
    approvals_kept_after_requote,
)
from payouts.errors import PayoutActionRefused
from payouts.models import (
    Approval,
    ChangeSource,
    NotificationKind,
    Payout,
    PayoutStatus,
    chain_from_json,
)
from payouts.states import payout_change_record, payout_locked, payout_transition
from staff.models import StaffUser
from staff.roles import APPROVAL_POLICY_MANAGE, PAYOUT_APPROVE, PAYOUT_INITIATE
from staff.step_up import proof_of, step_up_require

S = PayoutStatus
REASON_MAX = 500


def _round_approvals(payout: Payout) -> list[tuple[int, int, bool]]:
    return [
        (approver, step, voided is None)
        for approver, step, voided in payout.approvals.filter(round=payout.approval_round)
        .order_by("created_at", "pk")
        .values_list("approver_id", "step", "voided_at")
    ]


def recipient_payable_refuse(payout: Payout) -> None:
    """Dual control: no approval or release of a payout whose recipient is not approved now (a
    change superseded it, it was archived): 409 `recipient_not_approved` on `recipient`."""
    reason = recipient_not_payable_reason(payout.recipient)
    if reason:
        raise PayoutActionRefused("recipient_not_approved", reason, field="recipient")


def approval_facts(payout: Payout) -> ApprovalFacts:
    everyone = _round_approvals(payout)
    rows = [(approver, step) for approver, step, valid in everyone if valid]
    return ApprovalFacts(
        pending=payout.status == S.PENDING_APPROVAL,
        maker_id=payout.maker_id,
        recipient_creator_id=payout.recipient.created_by_id,
        approver_ids=[approver for approver, _ in rows],
        required=payout.approvals_required,
        chain=chain_from_json(payout.approval_chain),
        approval_steps=[step for _, step in rows],
        withdrawn_ids=[approver for approver, _, valid in everyone if not valid],
    )


def _may_approve_something(user: StaffUser, payout: Payout | int) -> bool:
    if user.has_perm(PAYOUT_APPROVE):
        return True
    pk = payout.pk if isinstance(payout, Payout) else payout
    chain = Payout.objects.filter(pk=pk).values_list("approval_chain", flat=True).first() or []
    roles = approver_roles(user)
    return any(step.role and step.role in roles for step in chain_from_json(chain))


_REFUSAL_STATUS = {
    Refusal.NOT_PERMITTED: 403,
    Refusal.MAKER: 403,
    Refusal.RECIPIENT_CREATOR: 403,
    Refusal.ALREADY_APPROVED: 409,
    Refusal.NOT_PENDING: 409,
    Refusal.COMPLETE: 409,
    Refusal.NOT_YOUR_STEP: 403,
    Refusal.WITHDRAWN: 409,
}


@dataclass(frozen=True)
class ApprovalOutcome:
    payout: Payout
    approvals: int
    required: int
    complete: bool


def reason_required(reason: str | None, *, ask: str) -> str:
    """The stripped reason, refused (400 on `reason`) when empty (`ask` says what to give) or
    longer than REASON_MAX."""
    reason = (reason or "").strip()
    if not reason:
        raise PayoutActionRefused("reason_required", ask, field="reason", status=400)
    if len(reason) > REASON_MAX:
        raise PayoutActionRefused(
            "reason_too_long",
            gettext("The reason must be at most %(REASON_MAX)s characters.")
            % {"REASON_MAX": REASON_MAX},
            field="reason",
            status=400,
        )
    return reason


def payout_approve(*, payout: Payout | int, by: StaffUser) -> ApprovalOutcome:
    """
    Count `by`'s approval if the rules allow it (pure `approval_decide`, under the row lock). The
    last approval moves the payout to `approved`; a crypto payout, which needs no OTP, is then
    submitted at once.

    Step-up: an approver's approval needs a fresh second factor (`payout.approve`), asked before
    any rule of the payout is looked at; someone without the approver permission is refused as
    before (`not_permitted`), never asked for a second factor they could not use.
    """
    if _may_approve_something(by, payout):
        step_up_require(by, action="payout.approve")
    with transaction.atomic():
        locked = payout_locked(payout)
        recipient_payable_refuse(locked)
        decision = approval_decide(
            approval_facts(locked),
            approver_id=by.pk,
            has_permission=by.has_perm(PAYOUT_APPROVE),
            roles=approver_roles(by),
        )
        if not decision.allowed:
            assert decision.refusal is not None
            raise PayoutActionRefused(
                str(decision.refusal), decision.message, status=_REFUSAL_STATUS[decision.refusal]
            )
        step = decision.step or 0
        proof = proof_of(by)
        Approval.objects.create(
            payout=locked,
            approver=by,
            round=locked.approval_round,
            step=step,
            second_factor_method=proof.second_factor_method if proof else "",
            second_factor_at=proof.second_factor_at if proof else None,
        )
        details = {
            "round": locked.approval_round,
            "approvals": decision.count_after,
            "required": locked.approvals_required,
            "step": step + 1,
            "step_label": decision.step_label,
        }
        if not decision.complete:
            payout_change_record(locked, by=by, audit="payout.approved", details=details)
            if approval_facts(locked).current_step() != step:
                # The next step of the chain opens: tell the people who may fill it.
                transaction.on_commit(lambda: notifications.notify_waiting_for_approval(locked))
        else:
            locked.approved_amount = locked.amount
            locked.approved_recipient_amount = locked.preview_recipient_amount
            locked.save(update_fields=["approved_amount", "approved_recipient_amount"])
            payout_transition(
                locked,
                S.APPROVED,
                source=ChangeSource.STAFF,
                by=by,
                reason="approvals complete",
                audit="payout.approved",
                details=details,
            )
            if locked.mode == "crypto":
                from payouts.release.initiation import submission_start

                submission_start(payout=locked, by=by)
    return ApprovalOutcome(
        payout=locked,
        approvals=decision.count_after,
        required=locked.approvals_required,
        complete=decision.complete,
    )


def payout_reject(*, payout: Payout | int, by: StaffUser, reason: str) -> Payout:
    """Send the payout back to its maker with the reason (the same SoD rules as approving).

    No step-up: a rejection moves no money and grants nothing. The payout goes back to its maker,
    who can submit it again; the worst a stolen session can do here is delay a payout, and
    every rejection is audited with its reason. Asking for a second factor would slow down the
    safe answer to a doubtful payout.
    """
    reason = reason_required(reason, ask=gettext("Say why the payout is rejected."))
    with transaction.atomic():
        locked = payout_locked(payout)
        facts = approval_facts(locked)
        # Rejecting is a checker's act too: the maker or the recipient's creator may not do it
        # (a maker withdraws with "cancel"); someone who already approved may change their mind.
        decision = approval_decide(
            ApprovalFacts(
                pending=facts.pending,
                maker_id=facts.maker_id,
                recipient_creator_id=facts.recipient_creator_id,
                approver_ids=[],
                required=max(1, facts.required),
            ),
            approver_id=by.pk,
            has_permission=by.has_perm(PAYOUT_APPROVE),
        )
        if not decision.allowed:
            assert decision.refusal is not None
            raise PayoutActionRefused(
                str(decision.refusal), decision.message, status=_REFUSAL_STATUS[decision.refusal]
            )
        locked.approvals.filter(round=locked.approval_round, voided_at__isnull=True).update(
            voided_at=timezone.now(), void_reason="rejected"
        )
        locked.rejection_reason = reason
        locked.save(update_fields=["rejection_reason"])
        payout_transition(
            locked,
            S.REJECTED,
            source=ChangeSource.STAFF,
            by=by,
            reason=reason,
            audit="payout.rejected",
            details={"reason": reason},
        )
        notifications.notify_maker(
            locked,
            NotificationKind.REJECTED,
            summary(
                gettext_noop("Payout %(id)s was rejected: %(reason)s"), id=locked.pk, reason=reason
            ),
        )
    return locked


def payout_requote_apply(
    *,
    payout: Payout | int,
    by: StaffUser | None,
    quote_id: str,
    recipient_amount: Decimal,
    expires_at: object = None,
    fees: dict[str, Any] | None = None,
) -> Payout:
    """
    Record a new reserved quote for a payout that was (being) approved, with its fees when the
    upstream gave them (the approvers see, and are charged, the re-quoted figures). Approvals
    are kept when the recipient amount and the total fees are within PAYOUTS_REQUOTE_TOLERANCE
    of what was approved; otherwise the round is voided and the payout waits for approval
    again. The changed body gets a new idempotency key: the old one may only ever be replayed
    with the old body.
    """
    tolerance = Decimal(str(settings.PAYOUTS_REQUOTE_TOLERANCE))
    new_fees = _total_fees_of(fees)
    with transaction.atomic():
        locked = payout_locked(payout)
        if locked.status not in (S.PENDING_APPROVAL, S.APPROVED):
            raise PayoutActionRefused(
                "not_requotable",
                gettext("Only a payout waiting for approval or approved is re-quoted."),
            )
        kept = _requote_keeps_approvals(locked, recipient_amount, new_fees, tolerance)
        before = _requote_record(
            locked,
            quote_id=quote_id,
            recipient_amount=recipient_amount,
            expires_at=expires_at,
            fees=fees,
        )
        if not kept:
            _approval_restart(locked, by=by)
        # No code releases a crypto payout: approved, with a price that fits, it goes now (as
        # after its last approval), or it would wait in `approved` for nothing.
        release_now = kept and locked.status == S.APPROVED and locked.mode == "crypto"
        payout_change_record(
            locked,
            by=by,
            audit="payout.requoted",
            announce=not release_now,
            details={
                "before": before,
                "after": {
                    "quote_id": quote_id,
                    "recipient_amount": recipient_amount,
                    "total_fees": locked.preview_total_fees,
                },
                "tolerance": tolerance,
                "approvals_kept": kept,
            },
        )
        if release_now:
            from payouts.release.initiation import submission_start

            submission_start(payout=locked, by=by)
    return locked


def _requote_record(
    locked: Payout,
    *,
    quote_id: str,
    recipient_amount: Decimal,
    expires_at: object,
    fees: dict[str, Any] | None,
) -> dict[str, Any]:
    """Put the new reserved quote on the payout, with a new key for the changed body; returns
    the figures it replaced (the approved ones, for the audit trail)."""
    before = {
        "quote_id": locked.preview_quote_id,
        "recipient_amount": locked.approved_recipient_amount or locked.preview_recipient_amount,
        "total_fees": locked.preview_total_fees,
    }
    locked.preview_quote_id = quote_id
    locked.preview_recipient_amount = recipient_amount
    if fees is not None:
        locked.preview_fees = fees
        locked.preview_total_fees = _total_fees_of(fees)
    if expires_at is not None:
        locked.preview_quote_expires_at = expires_at  # type: ignore[assignment]
    locked.preview_quote_status = "ACTIVE"
    idempotency.renew(locked, save=False)
    locked.save()
    return before


def payout_requote(*, payout: Payout | int, by: StaffUser) -> Payout:
    """
    The maker reserves a new price for a payout whose reserved quote expired before initiation
    (a new upstream preview with `create_quote`); approvals are kept only within the tolerance.
    """
    from gateway.errors import UpstreamError
    from payouts.drafts.pricing import fees_json, preview_upstream

    current = Payout.objects.select_related("environment", "virtual_account", "recipient").get(
        pk=payout.pk if isinstance(payout, Payout) else payout
    )
    if by.pk != current.maker_id or not by.has_perm(PAYOUT_INITIATE):
        raise PermissionDenied(gettext("Only the payout's maker re-quotes it."))
    if current.status not in (S.PENDING_APPROVAL, S.APPROVED) or current.quote_id:
        raise PayoutActionRefused(
            "not_requotable",
            gettext(
                "Only a payout waiting for approval or approved, priced by a reserved preview "
                "quote, is re-quoted."
            ),
        )
    try:
        preview = preview_upstream(current, reserve=True)
    except UpstreamError as exc:
        raise PayoutActionRefused(
            "requote_failed",
            gettext("The upstream could not re-quote: %(message)s") % {"message": exc.message},
            status=502,
        ) from exc
    if not preview.quote_id or preview.recipient_amount is None:
        raise PayoutActionRefused(
            "requote_failed", gettext("The upstream reserved no quote."), status=502
        )
    return payout_requote_apply(
        payout=current,
        by=by,
        quote_id=preview.quote_id,
        recipient_amount=preview.recipient_amount,
        expires_at=preview.quote_expires_at,
        fees=fees_json(preview.fees),
    )


def _approval_restart(locked: Payout, *, by: StaffUser | None) -> None:
    """A re-quote beyond the tolerance: this round's approvals are void, approval starts again."""
    locked.approvals.filter(round=locked.approval_round, voided_at__isnull=True).update(
        voided_at=timezone.now(), void_reason="figures changed beyond the tolerance"
    )
    locked.approval_round += 1
    locked.approved_amount = None
    locked.approved_recipient_amount = None
    locked.save(update_fields=["approval_round", "approved_amount", "approved_recipient_amount"])
    if locked.status == S.APPROVED:
        payout_transition(
            locked,
            S.PENDING_APPROVAL,
            source=ChangeSource.STAFF,
            by=by,
            reason="re-quoted beyond the tolerance: approval starts again",
        )
    else:
        notifications.notify_waiting_for_approval(locked)


def _requote_keeps_approvals(
    payout: Payout, recipient_amount: Decimal, total_fees: Decimal | None, tolerance: Decimal
) -> bool:
    """Both the recipient amount and (when known) the fees within the tolerance of the approved."""
    approved = payout.approved_recipient_amount or payout.preview_recipient_amount
    if approved is None or not approvals_kept_after_requote(
        approved=approved, requoted=recipient_amount, tolerance=tolerance
    ):
        return False
    if total_fees is None or payout.preview_total_fees is None:
        return True
    return approvals_kept_after_requote(
        approved=payout.preview_total_fees, requoted=total_fees, tolerance=tolerance
    )


def _total_fees_of(fees: dict[str, Any] | None) -> Decimal | None:
    total = (fees or {}).get("total_fees")
    return None if total is None else Decimal(str(total))


CANCELLABLE = frozenset({S.PENDING_APPROVAL, S.APPROVED})


def payout_cancel(*, payout: Payout | int, by: StaffUser, reason: str = "") -> Payout:
    """Withdraw a payout before anything was sent upstream (the upstream offers no cancel)."""
    with transaction.atomic():
        locked = payout_locked(payout)
        may = by.pk == locked.maker_id and by.has_perm(PAYOUT_INITIATE)
        may = may or by.has_perm(PAYOUT_APPROVE)
        if not may:
            raise PermissionDenied(gettext("Only the maker or an approver may cancel a payout."))
        if locked.status not in CANCELLABLE:
            raise PayoutActionRefused(
                "not_cancellable",
                gettext(
                    "Only a payout not yet sent to the upstream can be cancelled (this one is "
                    "%(value)s)."
                )
                % {"value": locked.get_status_display().lower()},
            )
        locked.otp_code_encrypted = ""
        locked.save(update_fields=["otp_code_encrypted"])
        payout_transition(
            locked,
            S.CANCELLED,
            source=ChangeSource.STAFF,
            by=by,
            reason=reason or "cancelled",
            audit="payout.cancelled",
            details={"reason": reason},
        )
    return locked


# --- Undo: an approver withdraws their own approval before release ------------------------------


def approval_released(payout: Payout) -> bool:
    """Past the point of no return for an approval: a code was asked for (fiat) or the
    initiation began (it may have reached the upstream)."""
    return bool(payout.otp_sent_to or payout.submitting_since or payout.submit_attempts)


def payout_approval_withdraw(*, payout: Payout | int, by: StaffUser, reason: str) -> Payout:
    """
    `by` takes back their own approval of this round while the payout is not released (waiting
    for approval, or approved with no code asked for and nothing sent upstream). The approval is
    voided with the reason, audited, and the payout waits again for the step it filled (an
    approved payout goes back to pending approval). No step-up: withdrawing only removes an
    approval, it can never move money; the reason is required and kept.
    """
    if not (by.has_perm(PAYOUT_APPROVE) or by.has_perm(APPROVAL_POLICY_MANAGE)):
        # The API's permission for it (config.api), held here for every caller.
        raise PermissionDenied(gettext("Only approvers withdraw approvals."))
    reason = reason_required(reason, ask=gettext("Say why the approval is withdrawn."))
    with transaction.atomic():
        locked = payout_locked(payout)
        mine = (
            locked.approvals.select_for_update()
            .filter(round=locked.approval_round, voided_at__isnull=True, approver=by)
            .first()
        )
        if mine is None:
            raise PayoutActionRefused(
                "no_approval",
                gettext("You have no approval of this payout to withdraw."),
                status=409,
            )
        if locked.status not in (S.PENDING_APPROVAL, S.APPROVED) or approval_released(locked):
            raise PayoutActionRefused(
                "released",
                gettext(
                    "The payout is already being released: an approval can no longer be withdrawn "
                    "(cancel or reject it instead if it is still possible)."
                ),
                status=409,
            )
        mine.voided_at = timezone.now()
        mine.void_reason = f"withdrawn: {reason}"[:200]
        mine.save(update_fields=["voided_at", "void_reason"])
        details = {"round": locked.approval_round, "step": mine.step + 1, "reason": reason}
        if locked.status == S.APPROVED:
            locked.approved_amount = None
            locked.approved_recipient_amount = None
            locked.save(update_fields=["approved_amount", "approved_recipient_amount"])
            payout_transition(
                locked,
                S.PENDING_APPROVAL,
                source=ChangeSource.STAFF,
                by=by,
                reason=f"approval withdrawn: {reason}",
                audit="payout.approval_withdrawn",
                details=details,
            )
        else:
            payout_change_record(locked, by=by, audit="payout.approval_withdrawn", details=details)
    return locked
