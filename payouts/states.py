"""The payout state machine: one transition table over every status, one function to move."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from payouts.models import ChangeSource, Payout, PayoutStatus, PayoutStatusChange
from staff.actions import announce_change, record_action
from staff.models import StaffUser

S = PayoutStatus

# Our side (draft → approval → submission), then the upstream's states (decisions.md 3), which
# arrive by event or poll, late or out of order: a poll may skip states, so upstream moves allow
# any later state. COMPLETED is not final: a return moves it on.
TRANSITIONS: dict[str, frozenset[str]] = {
    S.DRAFT: frozenset({S.PENDING_APPROVAL}),
    S.PENDING_APPROVAL: frozenset({S.DRAFT, S.APPROVED, S.REJECTED, S.CANCELLED}),
    S.REJECTED: frozenset({S.DRAFT}),
    S.APPROVED: frozenset({S.SUBMITTING, S.PENDING_APPROVAL, S.CANCELLED}),
    # A permanent refusal the approver can correct (wrong or expired OTP, quote
    # expired, funds short) goes back to APPROVED, with the same idempotency key (the upstream
    # stored nothing for a refused request). RETURNED is reachable from every upstream state
    # because a return can be the first news we get (events arrive late and out of order).
    S.SUBMITTING: frozenset(
        {
            S.APPROVED,
            S.CREATED,
            S.PENDING,
            S.PROCESSING,
            S.IN_REVIEW,
            S.KYT_PENDING,
            S.FAILED,
            S.COMPLETED,
            S.RETURNED,
            S.CANCELLED,
        }
    ),
    S.CREATED: frozenset(
        {
            S.PENDING,
            S.PROCESSING,
            S.IN_REVIEW,
            S.KYT_PENDING,
            S.COMPLETED,
            S.FAILED,
            S.CANCELLED,
            S.RETURNED,
        }
    ),
    S.PENDING: frozenset(
        {S.PROCESSING, S.IN_REVIEW, S.COMPLETED, S.FAILED, S.CANCELLED, S.RETURNED}
    ),
    S.KYT_PENDING: frozenset({S.PROCESSING, S.IN_REVIEW, S.COMPLETED, S.FAILED, S.RETURNED}),
    S.IN_REVIEW: frozenset({S.PROCESSING, S.COMPLETED, S.FAILED, S.RETURNED}),
    S.PROCESSING: frozenset({S.COMPLETED, S.FAILED, S.RETURNED}),
    S.COMPLETED: frozenset({S.RETURNED, S.FAILED}),
    S.FAILED: frozenset(),
    S.RETURNED: frozenset(),
    S.CANCELLED: frozenset(),
}

# Statuses a maker may still change (edit, documents, preview, delete).
EDITABLE = frozenset({S.DRAFT})
FINAL = frozenset(state for state, targets in TRANSITIONS.items() if not targets)
# Submitted for approval and not yet settled: the "identical pending payout" check looks here.
IN_FLIGHT = frozenset(
    {
        S.PENDING_APPROVAL,
        S.APPROVED,
        S.SUBMITTING,
        S.CREATED,
        S.PENDING,
        S.PROCESSING,
        S.IN_REVIEW,
        S.KYT_PENDING,
    }
)


class IllegalTransition(Exception):
    """A move the table does not allow."""

    def __init__(self, payout: Payout, to: str) -> None:
        super().__init__(f"payout {payout.pk}: {payout.status} -> {to} is not allowed")
        self.from_status = payout.status
        self.to_status = to


def _stamp_approval_policy(payout: Payout, *, resubmitted: bool) -> list[str]:
    from payouts.approval.policy import approval_policy_current, chain_for, payout_facts
    from payouts.approval.rules import chain_total
    from payouts.models import chain_to_json

    policy = approval_policy_current()
    chain = chain_for(policy, payout_facts(payout))
    payout.approval_policy = policy
    payout.approval_chain = chain_to_json(chain)
    payout.approvals_required = chain_total(chain)
    fields = ["approval_policy", "approvals_required", "approval_chain"]
    if resubmitted:
        payout.approval_round += 1
        payout.rejection_reason = ""
        fields += ["approval_round", "rejection_reason"]
    return fields


def can_move(current: str, to: str) -> bool:
    return to in TRANSITIONS.get(current, frozenset())


def payout_transition(
    payout: Payout,
    to: str,
    *,
    source: str,
    by: StaffUser | None = None,
    reason: str = "",
    at: datetime | None = None,
    event_id: str = "",
    audit: str = "",
    details: dict[str, Any] | None = None,
    upstream_at: datetime | None = None,
) -> PayoutStatusChange:
    """
    Move `payout` (locked by the caller, e.g. select_for_update) to `to`, the whole job in one
    transaction: the timeline row, the audit entry `audit` (with `details`) when the move is a
    person's or the system's act, and the live message to open pages once it commits.
    `source` is a ChangeSource (staff, event, poll, system). Moves the upstream reports (event,
    poll) name no audit action: their timeline row and event record say where they came from.
    `at` is our clock (the timeline's order); `upstream_at` the upstream's time of the move when
    it said (the ledger's date of a reversal).
    """
    if source not in ChangeSource.values:
        raise ValueError(f"unknown change source {source!r}")
    if not can_move(payout.status, to):
        raise IllegalTransition(payout, to)
    moment = at or timezone.now()
    previous = payout.status
    with transaction.atomic():
        payout.status = to
        payout.updated_at = moment
        fields = ["status", "updated_at"]
        if to == S.PENDING_APPROVAL and previous == S.DRAFT:
            # A (re)submission: the approval policy in force now decides this payout's count,
            # and a resubmitted payout's earlier approvals (a former round) no longer count.
            fields += _stamp_approval_policy(payout, resubmitted=payout.submitted_at is not None)
        if to == S.PENDING_APPROVAL and payout.submitted_at is None:
            payout.submitted_at = moment
            fields.append("submitted_at")
        payout.save(update_fields=fields)
        change = PayoutStatusChange.objects.create(
            payout=payout,
            from_status=previous,
            to_status=to,
            source=source,
            by=by,
            reason=reason[:500],
            at=moment,
            event_id=event_id,
            upstream_at=upstream_at,
        )
        # Every move reaches the open pages (after commit), whichever service made it.
        if audit:
            record_action(
                actor=by,
                action=audit,
                target=payout,
                details=details or {},
                before={"status": previous},
                after={"status": to},
            )
        else:
            announce_change(payout)
        if to == S.PENDING_APPROVAL:
            from payouts.approval.notifications import notify_waiting_for_approval

            # Whoever moved it there, everyone who may approve it hears of it.
            transaction.on_commit(lambda: notify_waiting_for_approval(payout))
        return change


def payout_change_record(
    payout: Payout,
    *,
    by: StaffUser | None,
    audit: str,
    details: dict[str, Any] | None = None,
    announce: bool = True,
) -> None:
    """
    A change to a payout that moves no status (an approval short of the count, a code sent, a
    re-quote, an answer recorded): its audit entry, and the live message once the transaction
    commits. `announce=False` only where a move follows in the same transaction and announces
    the payout itself (its message carries the newer status).
    """
    record_action(actor=by, action=audit, target=payout, details=details or {}, announce=announce)


def payout_locked(payout: Payout | int) -> Payout:
    """The payout row, locked until the end of the caller's transaction (SELECT ... FOR UPDATE).

    Every decision about approvals is taken under this lock, so two approvers at the same moment
    are serialised: the second one sees the first one's approval.
    """
    pk = payout.pk if isinstance(payout, Payout) else payout
    return (
        Payout.objects.select_for_update(of=("self",))
        .select_related("recipient", "environment", "virtual_account")
        .get(pk=pk)
    )
