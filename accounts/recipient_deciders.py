"""Who may decide on a recipient under dual control (docs/directory.md "Dual control on bank
details"), and the locked row and snapshot a decision reads and audits."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext

from accounts.models import Recipient, RecipientChange, RecipientChangeStatus, RecipientStatus
from accounts.recipients import RECIPIENT, recipient_approver_roles
from staff import roles
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.step_up import step_up_require
from users.mirror import require


class RecipientDecisionRefused(ServiceError):
    """Dual control refuses this person or this state (403 for the person, 409 for the state)."""

    def __init__(self, code: str, message: str, *, status: int) -> None:
        super().__init__(message, code=code, status=status)


def recipient_snapshot(recipient: Recipient) -> dict[str, Any]:
    return {**RECIPIENT.snapshot(recipient), "status": recipient.status}


def locked_recipient(recipient: Recipient) -> Recipient:
    return Recipient.objects.select_for_update().select_related("environment").get(pk=recipient.pk)


def pending_change(recipient: Recipient) -> RecipientChange | None:
    return recipient.changes.filter(status=RecipientChangeStatus.PENDING_APPROVAL).first()


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


def decide_require(by: StaffUser, recipient: Recipient, change: RecipientChange | None) -> None:
    refusal = decision_refusal(by, recipient, change)
    if refusal is not None:
        raise refusal


def may_ask_step_up(by: StaffUser, *, action: str) -> None:
    """Step-up is asked only of someone who could decide (never of a roleless caller)."""
    require(by, roles.RECIPIENTS_APPROVE)
    step_up_require(by, action=action)


def require_decider_or_manager(by: StaffUser) -> None:
    """Pages of the approval queue: approvers and managers read it."""
    if not (by.has_perm(roles.RECIPIENTS_APPROVE) or by.has_perm(roles.ACCOUNTS_MANAGE)):
        raise PermissionDenied(gettext("You may not see the recipients approval queue."))
