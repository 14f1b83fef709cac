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

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import (
    Recipient,
    RecipientChange,
    RecipientChangeStatus,
    RecipientStatus,
)
from accounts.recipients import (
    RECIPIENT,
    _recipient_body,
    recipient_approver_roles,
    validate_recipient,
)
from accounts.virtual_accounts import RENAME
from gateway.client import call_sync, upstream
from staff import roles
from staff.audit import audit_record
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.step_up import step_up_require
from users.mirror import mirror_create, require, timeline_add

REASON_MAX = 500

# The fields a change may carry (flat, as `validate_recipient` returns them), in page order.
EDITABLE_FIELDS = (
    "kind",
    "first_name",
    "last_name",
    "company_name",
    "email",
    "street_name",
    "city",
    "state",
    "postal_code",
    "country",
    "account_type",
    "account_number",
    "routing_number",
    "swift_code",
    "bank_name",
)


class RecipientDecisionRefused(ServiceError):
    """Dual control refuses this person or this state (403 for the person, 409 for the state)."""

    def __init__(self, code: str, message: str, *, status: int) -> None:
        super().__init__(message, code=code, status=status)


def mask_account_number(value: str) -> str:
    return f"…{value[-4:]}" if value else ""


def current_values(recipient: Recipient) -> dict[str, Any]:
    return {name: getattr(recipient, name) for name in EDITABLE_FIELDS}


def masked(values: dict[str, Any]) -> dict[str, Any]:
    """What history, audit and pages show of values: account numbers to their last four."""
    return {
        k: mask_account_number(str(v)) if k == "account_number" else v for k, v in values.items()
    }


def _snapshot(recipient: Recipient) -> dict[str, Any]:
    return {**RECIPIENT.snapshot(recipient), "status": recipient.status}


def pending_change(recipient: Recipient) -> RecipientChange | None:
    return recipient.changes.filter(status=RecipientChangeStatus.PENDING_APPROVAL).first()


# --- who may decide ---------------------------------------------------------------------------


def who_may_approve() -> str:
    """The plain line a page shows instead of the buttons: who decides."""
    names = [
        str(roles.ROLES_BY_KEY[key].display_name) if key in roles.ROLES_BY_KEY else key
        for key in sorted(recipient_approver_roles())
    ]
    return gettext(
        "Recipients and changes of their bank details are approved by: %(roles)s; never by "
        "the person who registered the recipient or proposed the change."
    ) % {"roles": ", ".join(names)}


def approver_refusal(by: StaffUser) -> RecipientDecisionRefused | None:
    """Why `by` may approve no recipient at all (their permission or role; None: they may)."""
    if not by.has_perm(roles.RECIPIENTS_APPROVE):
        return RecipientDecisionRefused(
            "not_permitted", gettext("You may not approve recipients."), status=403
        )
    allowed = recipient_approver_roles()
    if not allowed.intersection(roles.role_names_of(by)):
        return RecipientDecisionRefused(
            "role_not_allowed",
            gettext("The approval policy lets only these roles approve recipients: ")
            + ", ".join(sorted(allowed))
            + ".",
            status=403,
        )
    return None


def decision_refusal(
    by: StaffUser, recipient: Recipient, change: RecipientChange | None
) -> RecipientDecisionRefused | None:
    """Why `by` may not approve or reject what is pending on `recipient` (None: they may)."""
    refusal = approver_refusal(by)
    if refusal is not None:
        return refusal
    if recipient.created_by_id == by.pk:
        return RecipientDecisionRefused(
            "recipient_creator",
            gettext("You registered this recipient; someone else must approve it."),
            status=403,
        )
    if change is not None and change.proposed_by_id == by.pk:
        return RecipientDecisionRefused(
            "change_author",
            gettext("You proposed this change; someone else must approve it."),
            status=403,
        )
    if change is None and recipient.supersedes_id and recipient.status == "pending_approval":
        return RecipientDecisionRefused(
            "change_in_progress",
            gettext(
                "This version is made by a change: it is decided with the change, on the "
                "recipient it replaces."
            ),
            status=409,
        )
    if change is None and recipient.status != RecipientStatus.PENDING_APPROVAL:
        return RecipientDecisionRefused(
            "not_pending",
            gettext("Nothing is waiting for approval on this recipient (it is %(value)s).")
            % {"value": recipient.get_status_display().lower()},
            status=409,
        )
    return None


def _decide_require(by: StaffUser, recipient: Recipient, change: RecipientChange | None) -> None:
    refusal = decision_refusal(by, recipient, change)
    if refusal is not None:
        raise refusal


def _locked(recipient: Recipient) -> Recipient:
    return Recipient.objects.select_for_update().select_related("environment").get(pk=recipient.pk)


def _may_ask_step_up(by: StaffUser, *, action: str) -> None:
    """Step-up is asked only of someone who could decide (never of a roleless caller)."""
    require(by, roles.RECIPIENTS_APPROVE)
    step_up_require(by, action=action)


# --- approve and reject ----------------------------------------------------------------------


def recipient_approve(*, recipient: Recipient, by: StaffUser) -> Recipient:
    """
    Approve what waits on `recipient`: the new recipient itself (it becomes payable), or its
    pending change (the new details are registered upstream as a new recipient, which becomes
    payable, and this one is superseded). Returns the payable version.
    """
    _may_ask_step_up(by, action="recipient.approve")
    change = pending_change(recipient)
    _decide_require(by, recipient, change)
    if change is not None:
        return _change_approve(recipient=recipient, change=change, by=by)
    with transaction.atomic():
        locked = _locked(recipient)
        _decide_require(by, locked, None)
        before = _snapshot(locked)
        locked.status = RecipientStatus.APPROVED
        locked.approved_by, locked.approved_at = by, timezone.now()
        locked.save(update_fields=["status", "approved_by", "approved_at", "updated_at"])
        timeline_add(locked, summary=f"Approved by {by.email}: payable", actor=by)
        audit_record(
            actor=by,
            action="recipient.approved",
            target=locked,
            details={"before": before, "after": _snapshot(locked)},
        )
    return locked


def recipient_reject(*, recipient: Recipient, by: StaffUser, reason: str) -> Recipient:
    """Reject what waits on `recipient` (the recipient, or its pending change) with a reason."""
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
    _may_ask_step_up(by, action="recipient.reject")
    with transaction.atomic():
        locked = _locked(recipient)
        change = (
            RecipientChange.objects.select_for_update()
            .filter(recipient=locked, status=RecipientChangeStatus.PENDING_APPROVAL)
            .first()
        )
        _decide_require(by, locked, change)
        now = timezone.now()
        if change is not None:
            change.status = RecipientChangeStatus.REJECTED
            change.decided_by, change.decided_at, change.reason = by, now, reason
            change.save(update_fields=["status", "decided_by", "decided_at", "reason"])
            timeline_add(
                locked,
                summary=f"Change of details rejected by {by.email}: {reason}",
                actor=by,
            )
            audit_record(
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
            return locked
        before = _snapshot(locked)
        locked.status = RecipientStatus.REJECTED
        locked.rejected_by, locked.rejected_at, locked.rejection_reason = by, now, reason
        locked.save(
            update_fields=["status", "rejected_by", "rejected_at", "rejection_reason", "updated_at"]
        )
        timeline_add(locked, summary=f"Rejected by {by.email}: {reason}", actor=by)
        audit_record(
            actor=by,
            action="recipient.rejected",
            target=locked,
            details={"reason": reason, "before": before, "after": _snapshot(locked)},
        )
    return locked


# --- changes ---------------------------------------------------------------------------------


def recipient_change_propose(
    *, recipient: Recipient, by: StaffUser, values: dict[str, Any]
) -> RecipientChange:
    """
    Propose new names, address or bank details (`values` may hold only the fields that change;
    the others keep their current values). Checked as a new recipient is; nothing is sent
    upstream until a second person approves. The current details stay payable meanwhile.
    """
    require(by, roles.ACCOUNTS_MANAGE)
    current = current_values(recipient)
    given = {k: v for k, v in values.items() if k in EDITABLE_FIELDS and v is not None}
    clean = validate_recipient({**current, **given})
    changed = sorted(k for k in EDITABLE_FIELDS if clean.get(k) != current.get(k))
    if not changed:
        raise ServiceError(gettext("Nothing changed."), code="no_change")
    with transaction.atomic():
        locked = _locked(recipient)
        if locked.status != RecipientStatus.APPROVED:
            raise RecipientDecisionRefused(
                "not_editable",
                gettext(
                    "Only an approved recipient can be changed (this one is %(value)s); register "
                    "a new recipient instead."
                )
                % {"value": locked.get_status_display().lower()},
                status=409,
            )
        if locked.changes.filter(status=RecipientChangeStatus.PENDING_APPROVAL).exists():
            raise RecipientDecisionRefused(
                "change_pending",
                gettext(
                    "A change of this recipient is already waiting for approval; it must be "
                    "approved or rejected first."
                ),
                status=409,
            )
        change = RecipientChange.objects.create(
            recipient=locked,
            values=clean,
            before=masked({k: current[k] for k in changed}),
            after=masked({k: clean[k] for k in changed}),
            proposed_by=by,
        )
        timeline_add(
            locked,
            summary=(
                f"Change of {', '.join(changed)} proposed by {by.email}; "
                "the current details stay payable until a second person approves it"
            ),
            actor=by,
        )
        audit_record(
            actor=by,
            action="recipient.change_proposed",
            target=locked,
            details={"change": change.pk, "before": change.before, "after": change.after},
        )
    return change


def _change_approve(*, recipient: Recipient, change: RecipientChange, by: StaffUser) -> Recipient:
    """Register the change's details as a new upstream recipient (once, by the change's committed
    key; a retry after no answer adopts what the upstream made), then in one transaction: the
    new version approved, the old one superseded, the change decided, audited."""
    end_user = recipient.end_user
    clean = dict(change.values)
    body = _recipient_body(clean, end_user)
    new = mirror_create(
        RECIPIENT,
        environment_id=recipient.environment_id,
        request_key=change.request_key,
        request={**clean, "end_user_id": end_user.pk, "supersedes": recipient.pk},
        defaults={**clean, "end_user": end_user, "supersedes": recipient},
        by=change.proposed_by,
        send=lambda row: call_sync(upstream(end_user.environment).recipients.create, **body),
        refused_for_good=(400, 404),
        what="the changed recipient",
        rename=RENAME,
        created_summary=lambda row: (
            f"New version of recipient {recipient.pk} (change proposed by "
            f"{change.proposed_by.email}), registered upstream on {by.email}'s approval"
        ),
    )
    with transaction.atomic():
        old = _locked(recipient)
        locked_change = RecipientChange.objects.select_for_update().get(pk=change.pk)
        if locked_change.status != RecipientChangeStatus.PENDING_APPROVAL:
            if locked_change.new_recipient_id != new.pk:
                # Withdrawn meanwhile (rejected, or the recipient archived): the version just
                # registered upstream must never become payable.
                _orphan_reject(new, by=by)
            return locked_change.new_recipient or old
        _decide_require(by, old, locked_change)
        now = timezone.now()
        new = Recipient.objects.select_for_update().get(pk=new.pk)
        new_before = _snapshot(new)
        new.status = RecipientStatus.APPROVED
        new.approved_by, new.approved_at = by, now
        new.save(update_fields=["status", "approved_by", "approved_at", "updated_at"])
        old_before = _snapshot(old)
        old.status = RecipientStatus.SUPERSEDED
        old.save(update_fields=["status", "updated_at"])
        locked_change.status = RecipientChangeStatus.APPROVED
        locked_change.decided_by, locked_change.decided_at = by, now
        locked_change.new_recipient = new
        locked_change.save(update_fields=["status", "decided_by", "decided_at", "new_recipient"])
        timeline_add(
            old,
            summary=f"Change approved by {by.email}: superseded by recipient {new.pk}",
            actor=by,
        )
        timeline_add(new, summary=f"Approved by {by.email}: payable", actor=by)
        audit_record(
            actor=by,
            action="recipient.change_approved",
            target=new,
            details={
                "change": locked_change.pk,
                "supersedes": old.pk,
                "before": locked_change.before,
                "after": locked_change.after,
                "new_version": {"before": new_before, "after": _snapshot(new)},
            },
        )
        audit_record(
            actor=by,
            action="recipient.superseded",
            target=old,
            details={"by_recipient": new.pk, "before": old_before, "after": _snapshot(old)},
        )
    return new


def _orphan_reject(row: Recipient, *, by: StaffUser) -> None:
    locked = Recipient.objects.select_for_update().get(pk=row.pk)
    if locked.status != RecipientStatus.PENDING_APPROVAL:
        return
    before = _snapshot(locked)
    locked.status = RecipientStatus.REJECTED
    locked.rejected_at = timezone.now()
    locked.rejection_reason = gettext("The change was withdrawn before its approval completed.")
    locked.save(update_fields=["status", "rejected_at", "rejection_reason", "updated_at"])
    timeline_add(locked, summary=locked.rejection_reason, actor=by)
    audit_record(
        actor=by,
        action="recipient.rejected",
        target=locked,
        details={"reason": locked.rejection_reason, "before": before, "after": _snapshot(locked)},
    )


# --- archive ---------------------------------------------------------------------------------


def recipient_archive(*, recipient: Recipient, by: StaffUser, reason: str = "") -> Recipient:
    """Take a recipient out of use at any time: not payable, out of the payout pickers, shown
    in lists under the "archived" filter. A pending change of it is withdrawn."""
    require(by, roles.ACCOUNTS_MANAGE)
    reason = " ".join(str(reason or "").split())[:REASON_MAX]
    with transaction.atomic():
        locked = _locked(recipient)
        if locked.status in (RecipientStatus.ARCHIVED, RecipientStatus.SUPERSEDED):
            raise RecipientDecisionRefused(
                "not_archivable",
                gettext("This recipient is already %(value)s.")
                % {"value": locked.get_status_display().lower()},
                status=409,
            )
        before = _snapshot(locked)
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
        audit_record(
            actor=by,
            action="recipient.archived",
            target=locked,
            details={
                "reason": reason,
                "changes_withdrawn": withdrawn,
                "before": before,
                "after": _snapshot(locked),
            },
        )
    return locked


def require_decider_or_manager(by: StaffUser) -> None:
    """Pages of the approval queue: approvers and managers read it."""
    if not (by.has_perm(roles.RECIPIENTS_APPROVE) or by.has_perm(roles.ACCOUNTS_MANAGE)):
        raise PermissionDenied(gettext("You may not see the recipients approval queue."))
