"""What the payout page shows one person, by concept: approvals, actions, deposit, records, and
the person's next action. The page is one live region (templates/payouts/payout_detail.html
`#payout-live`), so every fact here is re-read together whenever the payout changes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils.translation import gettext

from payouts.approval.rules import approval_decide
from payouts.approval.selectors import approvals_history, chain_display, valid_approvals
from payouts.approval.services import (
    CANCELLABLE,
    approval_facts,
    approval_released,
    approver_roles,
)
from payouts.drafts.documents import documents_opened_by
from payouts.models import Payout, PayoutStatus
from payouts.qr import deposit_qr_svg
from payouts.release.waiting import wait_text
from payouts.tracking.timeline import timeline
from staff.models import AuditEntry, StaffUser
from staff.roles import PAYOUT_APPROVE, PAYOUT_INITIATE

S = PayoutStatus

# The person's next action, shown right under the page's header (docs/payouts.md).
NEXT_DECIDE = "decide"  # approve or reject a payout waiting for approval
NEXT_RELEASE = "release"  # send and enter the code that releases an approved payout


def approvals_context(user: StaffUser, payout: Payout) -> dict[str, Any]:
    """The approvals panel: who approved (and opened the documents), and what this person may do."""
    facts = approval_facts(payout)
    roles = approver_roles(user)
    is_approver = user.has_perm(PAYOUT_APPROVE)
    decision = approval_decide(facts, approver_id=user.pk, has_permission=is_approver, roles=roles)
    fills_a_step = is_approver or any(step.role in roles for step in facts.steps() if step.role)
    pending = payout.status == S.PENDING_APPROVAL
    approvals = valid_approvals(payout)
    documents = list(payout.documents.all())
    opened = documents_opened_by(payout)
    history = list(approvals_history(payout))
    for approval in history:  # shown beside each approval: did they open the documents?
        setattr(approval, "documents_opened", len(opened.get(approval.approver_id, ())))  # noqa: B010
    return {
        "documents_total": len(documents),
        "documents_opened_by_me": opened.get(user.pk, set()),
        "documents_not_opened": [d for d in documents if d.pk not in opened.get(user.pk, ())],
        "approvals": approvals,
        "approval_count_label": gettext("%(given)d of %(required)d")
        % {"given": len(approvals), "required": payout.approvals_required},
        "approvals_history": history,
        "can_approve": decision.allowed,
        "approve_refusal": decision.message if fills_a_step and pending else "",
        "approval_chain_label": chain_display(facts.steps()),
        "can_withdraw": any(a.approver_id == user.pk for a in approvals)
        and payout.status in (S.PENDING_APPROVAL, S.APPROVED)
        and not approval_released(payout),
        "can_reject": is_approver
        and pending
        and user.pk not in (payout.maker_id, payout.recipient.created_by_id),
    }


def actions_context(user: StaffUser, payout: Payout) -> dict[str, Any]:
    """The status panel's actions: cancel, re-send with the same key, re-quote."""
    is_approver = user.has_perm(PAYOUT_APPROVE)
    is_maker = user.pk == payout.maker_id and user.has_perm(PAYOUT_INITIATE)
    return {
        "can_cancel": payout.status in CANCELLABLE and (is_approver or is_maker),
        "can_resend": is_approver and payout.status == S.SUBMITTING,
        "can_requote": is_maker
        and payout.status in (S.PENDING_APPROVAL, S.APPROVED)
        and bool(payout.preview_quote_id)
        and not payout.quote_id,
    }


def deposit_context(payout: Payout, *, now: datetime) -> dict[str, Any]:
    """A crypto payout's deposit instructions: what to send where, until when."""
    deposit: dict[str, Any] = payout.deposit_instructions or {}
    expires = None
    if deposit.get("expires_at"):
        expires = datetime.fromisoformat(str(deposit["expires_at"]))
    address = deposit.get("wallet_address")
    return {
        "deposit": deposit,
        "deposit_qr": deposit_qr_svg(address) if address else "",
        "deposit_expires": expires,
        "deposit_expired": bool(expires and expires <= now),
    }


def records_context(payout: Payout) -> dict[str, Any]:
    """What happened: the timeline, any wait on the upstream, the audit trail."""
    return {
        "timeline_rows": timeline(payout),
        # While the gateway retries (the recovery's wait is said by initiation_error).
        "upstream_wait": wait_text(payout) if payout.upstream_wait_attempt else "",
        "audit": AuditEntry.objects.filter(target_type="payouts.payout", target_id=str(payout.pk))
        .select_related("actor")
        .order_by("at", "pk"),
    }


def next_action(payout: Payout, *, approvals: dict[str, Any], release: dict[str, Any]) -> str:
    """The action this person takes next on the payout, if any: the page shows it first."""
    if payout.status == S.PENDING_APPROVAL and (
        approvals["can_approve"] or approvals["can_reject"]
    ):
        return NEXT_DECIDE
    if release["can_release"]:
        return NEXT_RELEASE
    return ""
