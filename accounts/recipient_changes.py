"""Changes of a recipient's names, address or bank details under dual control: proposed, they wait
for a second person; approved, the new details are registered upstream as a NEW recipient (the
upstream has no update) through `users.mirror` with the change's committed `request_key`, and
the old version is superseded (docs/directory.md "Dual control on bank details")."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import Recipient, RecipientChange, RecipientChangeStatus, RecipientStatus
from accounts.recipient_deciders import (
    RecipientDecisionRefused,
    decide_require,
    locked_recipient,
    recipient_snapshot,
)
from accounts.recipients import RECIPIENT, _recipient_body, validate_recipient
from accounts.virtual_accounts import RENAME
from gateway.client import call_sync, upstream
from staff import roles
from staff.actions import record_action
from staff.errors import ServiceError
from staff.models import StaffUser
from users.mirror import mirror_create, require, timeline_add

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


def mask_account_number(value: str) -> str:
    return f"…{value[-4:]}" if value else ""


def current_values(recipient: Recipient) -> dict[str, Any]:
    return {name: getattr(recipient, name) for name in EDITABLE_FIELDS}


def masked(values: dict[str, Any]) -> dict[str, Any]:
    """What history, audit and pages show of values: account numbers to their last four."""
    return {
        k: mask_account_number(str(v)) if k == "account_number" else v for k, v in values.items()
    }


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
        locked = locked_recipient(recipient)
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
        record_action(
            actor=by,
            action="recipient.change_proposed",
            target=locked,
            details={"change": change.pk, "before": change.before, "after": change.after},
        )
    return change


def recipient_change_approve(
    *, recipient: Recipient, change: RecipientChange, by: StaffUser
) -> Recipient:
    """Register the change's details as a new upstream recipient (once, by the change's committed
    key; a retry after no answer adopts what the upstream made), then in one transaction: the
    new version approved, the old one superseded, the change decided, audited."""
    new = _new_version_register(recipient=recipient, change=change, by=by)
    with transaction.atomic():
        old = locked_recipient(recipient)
        locked_change = RecipientChange.objects.select_for_update().get(pk=change.pk)
        if locked_change.status != RecipientChangeStatus.PENDING_APPROVAL:
            if locked_change.new_recipient_id != new.pk:
                # Withdrawn meanwhile (rejected, or the recipient archived): the version just
                # registered upstream must never become payable.
                _orphan_reject(new, by=by)
            return locked_change.new_recipient or old
        decide_require(by, old, locked_change)
        now = timezone.now()
        new = Recipient.objects.select_for_update().get(pk=new.pk)
        new_before = recipient_snapshot(new)
        new.status = RecipientStatus.APPROVED
        new.approved_by, new.approved_at = by, now
        new.save(update_fields=["status", "approved_by", "approved_at", "updated_at"])
        old_before = recipient_snapshot(old)
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
        record_action(
            actor=by,
            action="recipient.change_approved",
            target=new,
            details={
                "change": locked_change.pk,
                "supersedes": old.pk,
                "before": locked_change.before,
                "after": locked_change.after,
                "new_version": {"before": new_before, "after": recipient_snapshot(new)},
            },
        )
        record_action(
            actor=by,
            action="recipient.superseded",
            target=old,
            details={
                "by_recipient": new.pk,
                "before": old_before,
                "after": recipient_snapshot(old),
            },
        )
    return new


def _new_version_register(
    *, recipient: Recipient, change: RecipientChange, by: StaffUser
) -> Recipient:
    """The change's details registered upstream as a new recipient (pending approval), once."""
    end_user = recipient.end_user
    clean = dict(change.values)
    body = _recipient_body(clean, end_user)
    return mirror_create(
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


def _orphan_reject(row: Recipient, *, by: StaffUser) -> None:
    locked = Recipient.objects.select_for_update().get(pk=row.pk)
    if locked.status != RecipientStatus.PENDING_APPROVAL:
        return
    before = recipient_snapshot(locked)
    locked.status = RecipientStatus.REJECTED
    locked.rejected_at = timezone.now()
    locked.rejection_reason = gettext("The change was withdrawn before its approval completed.")
    locked.save(update_fields=["status", "rejected_at", "rejection_reason", "updated_at"])
    timeline_add(locked, summary=locked.rejection_reason, actor=by)
    record_action(
        actor=by,
        action="recipient.rejected",
        target=locked,
        details={
            "reason": locked.rejection_reason,
            "before": before,
            "after": recipient_snapshot(locked),
        },
    )
