"""
Dual control on bank details: a recipient, or a change to one, is payable only once a second
person approves it (docs/directory.md "Dual control on bank details").

- `recipient_approve` / `recipient_reject`: by a holder of `accounts.approve_recipients` whose
  role the policy names (`recipients.recipient_approver_roles`), never the recipient's creator
  nor the change's author, after step-up. One call decides what is pending on the recipient:
  the recipient itself, or its pending change.
- `recipient_change_propose`: an edit of names, address or bank details waits for approval; the
  old details stay payable meanwhile. Approving it registers the new details as a NEW upstream
  recipient (the upstream has no update), through `users.mirror` with the change's committed
  `request_key`, then supersedes the old version.
- `recipient_archive`: a manager takes a recipient out of use (not payable, out of pickers).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import Recipient, RecipientChange, RecipientChangeStatus, RecipientStatus
from accounts.recipient_changes import (
    EDITABLE_FIELDS,
    current_values,
    mask_account_number,
    masked,
    recipient_change_approve,
    recipient_change_propose,
)
from accounts.recipient_deciders import (
    RecipientDecisionRefused,
    approver_refusal,
    decide_require,
    decision_refusal,
    locked_recipient,
    may_ask_step_up,
    pending_change,
    recipient_snapshot,
    require_decider_or_manager,
    who_may_approve,
)
from staff import roles
from staff.actions import record_action
from staff.errors import ServiceError
from staff.models import StaffUser
from users.mirror import require, timeline_add

# What callers import from here: the whole of dual control (the changes and the deciders live in
# their own modules, by concept).
__all__ = [
    "EDITABLE_FIELDS",
    "REASON_MAX",
    "RecipientDecisionRefused",
    "approver_refusal",
    "current_values",
    "decision_refusal",
    "mask_account_number",
    "masked",
    "pending_change",
    "recipient_approve",
    "recipient_archive",
    "recipient_change_propose",
    "recipient_reject",
    "require_decider_or_manager",
    "who_may_approve",
]

REASON_MAX = 500


# --- approve and reject ----------------------------------------------------------------------


def recipient_approve(*, recipient: Recipient, by: StaffUser) -> Recipient:
    """
    Approve what waits on `recipient`: the new recipient itself (it becomes payable), or its
    pending change (the new details are registered upstream as a new recipient, which becomes
    payable, and this one is superseded). Returns the payable version.
    """
    may_ask_step_up(by, action="recipient.approve")
    change = pending_change(recipient)
    decide_require(by, recipient, change)
    if change is not None:
        return recipient_change_approve(recipient=recipient, change=change, by=by)
    with transaction.atomic():
        locked = locked_recipient(recipient)
        decide_require(by, locked, None)
        before = recipient_snapshot(locked)
        locked.status = RecipientStatus.APPROVED
        locked.approved_by, locked.approved_at = by, timezone.now()
        locked.save(update_fields=["status", "approved_by", "approved_at", "updated_at"])
        timeline_add(locked, summary=f"Approved by {by.email}: payable", actor=by)
        record_action(
            actor=by,
            action="recipient.approved",
            target=locked,
            details={"before": before, "after": recipient_snapshot(locked)},
        )
    return locked


def recipient_reject(*, recipient: Recipient, by: StaffUser, reason: str) -> Recipient:
    """Reject what waits on `recipient` (the recipient, or its pending change) with a reason."""
    reason = _reason_clean(reason)
    may_ask_step_up(by, action="recipient.reject")
    with transaction.atomic():
        locked = locked_recipient(recipient)
        change = (
            RecipientChange.objects.select_for_update()
            .filter(recipient=locked, status=RecipientChangeStatus.PENDING_APPROVAL)
            .first()
        )
        decide_require(by, locked, change)
        if change is not None:
            _change_reject(locked, change, by=by, reason=reason)
            return locked
        before = recipient_snapshot(locked)
        locked.status = RecipientStatus.REJECTED
        locked.rejected_by, locked.rejected_at, locked.rejection_reason = by, timezone.now(), reason
        locked.save(
            update_fields=["status", "rejected_by", "rejected_at", "rejection_reason", "updated_at"]
        )
        timeline_add(locked, summary=f"Rejected by {by.email}: {reason}", actor=by)
        record_action(
            actor=by,
            action="recipient.rejected",
            target=locked,
            details={"reason": reason, "before": before, "after": recipient_snapshot(locked)},
        )
    return locked


def _reason_clean(reason: str) -> str:
    """The reason for a rejection, on one line; a clear 400 on `reason` when empty or too long."""
    reason = " ".join(str(reason or "").split())
    if not reason:
        raise ServiceError(
            gettext("Say why."), errors=[("reason", gettext("Give the reason for rejecting."))]
        )
    if len(reason) > REASON_MAX:
        raise ServiceError(
            gettext("The reason is too long."),
            errors=[
                (
                    "reason",
                    gettext("At most %(REASON_MAX)s characters.") % {"REASON_MAX": REASON_MAX},
                )
            ],
        )
    return reason


def _change_reject(
    locked: Recipient, change: RecipientChange, *, by: StaffUser, reason: str
) -> None:
    """Reject `locked`'s pending `change` (both locked): the current details stay payable."""
    change.status = RecipientChangeStatus.REJECTED
    change.decided_by, change.decided_at, change.reason = by, timezone.now(), reason
    change.save(update_fields=["status", "decided_by", "decided_at", "reason"])
    timeline_add(locked, summary=f"Change of details rejected by {by.email}: {reason}", actor=by)
    record_action(
        actor=by,
        action="recipient.change_rejected",
        target=locked,
        details={
            "change": change.pk,
            "reason": reason,
            "before": change.before,
            "after": change.after,
        },
    )


# --- archive ---------------------------------------------------------------------------------


def recipient_archive(*, recipient: Recipient, by: StaffUser, reason: str = "") -> Recipient:
    """Take a recipient out of use at any time: not payable, out of the payout pickers, shown
    in lists under the "archived" filter. A pending change of it is withdrawn."""
    require(by, roles.ACCOUNTS_MANAGE)
    reason = " ".join(str(reason or "").split())[:REASON_MAX]
    with transaction.atomic():
        locked = locked_recipient(recipient)
        if locked.status in (RecipientStatus.ARCHIVED, RecipientStatus.SUPERSEDED):
            raise RecipientDecisionRefused(
                "not_archivable",
                gettext("This recipient is already %(value)s.")
                % {"value": locked.get_status_display().lower()},
                status=409,
            )
        before = recipient_snapshot(locked)
        now = timezone.now()
        withdrawn = RecipientChange.objects.filter(
            recipient=locked, status=RecipientChangeStatus.PENDING_APPROVAL
        ).update(
            status=RecipientChangeStatus.REJECTED,
            decided_by=by,
            decided_at=now,
            reason="Withdrawn: the recipient was archived.",
        )
        locked.status = RecipientStatus.ARCHIVED
        locked.archived_by, locked.archived_at = by, now
        locked.save(update_fields=["status", "archived_by", "archived_at", "updated_at"])
        timeline_add(
            locked,
            summary=f"Archived by {by.email}" + (f": {reason}" if reason else ""),
            actor=by,
        )
        record_action(
            actor=by,
            action="recipient.archived",
            target=locked,
            details={
                "reason": reason,
                "changes_withdrawn": withdrawn,
                "before": before,
                "after": recipient_snapshot(locked),
            },
        )
    return locked
