"""Reads for maker-checker screens: the approval inbox, a payout's approvals, policy impact."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from gateway.models import Environment
from payouts.approval.rules import RuleSpec, approvals_required
from payouts.models import Approval, Payout, PayoutStatus
from staff.models import StaffUser
from staff.roles import PAYOUT_APPROVE

S = PayoutStatus
SCOPE_MINE = "mine"
SCOPE_ANYONE = "anyone"


def _current_approvals() -> Prefetch[Any]:
    return Prefetch(
        "approvals",
        queryset=Approval.objects.filter(voided_at__isnull=True).select_related("approver"),
        to_attr="approvals_valid",
    )


def approval_inbox(
    *, user: StaffUser, environment: Environment | None, scope: str = SCOPE_MINE
) -> QuerySet[Payout]:
    """
    Payouts waiting for approval. `mine`: the ones this person may approve now (not their own,
    not to a recipient they created, not already approved by them in this round); `anyone`:
    all of them. A constant number of queries whatever the length (related rows joined or
    prefetched).
    """
    payouts = (
        Payout.objects.filter(status=S.PENDING_APPROVAL)
        .select_related(
            "maker",
            "recipient",
            "recipient__created_by",
            "virtual_account__end_user",
            "quote",
        )
        .prefetch_related(_current_approvals(), "documents__views")
        .annotate(recipient_paid_before=_recipient_paid_before())
        .order_by("submitted_at", "pk")
    )
    if environment is not None:
        payouts = payouts.filter(environment=environment)
    if scope == SCOPE_MINE:
        if not user.has_perm(PAYOUT_APPROVE):
            return payouts.none()
        mine = Approval.objects.filter(
            payout=OuterRef("pk"),
            approver=user,
            round=OuterRef("approval_round"),
            voided_at__isnull=True,
        )
        payouts = (
            payouts.exclude(maker=user).exclude(recipient__created_by=user).exclude(Exists(mine))
        )
    return payouts


def _recipient_paid_before() -> Exists:
    """Another payout to the same recipient (these exact bank details) reached the upstream."""
    return Exists(
        Payout.objects.filter(recipient=OuterRef("recipient"))
        .exclude(upstream_id="")
        .exclude(pk=OuterRef("pk"))
    )


def recipient_flag(payout: Payout) -> str:
    """What an approver should notice about the payee (dual control on bank details): the
    first payout to a new recipient, or to details changed on a date; "" when these details
    were paid before. Uses the inbox's annotation when present."""
    paid_before = getattr(payout, "recipient_paid_before", None)
    if paid_before is None:
        paid_before = (
            Payout.objects.filter(recipient_id=payout.recipient_id)
            .exclude(upstream_id="")
            .exclude(pk=payout.pk)
            .exists()
        )
    if paid_before:
        return ""
    recipient = payout.recipient
    if recipient.supersedes_id is not None:
        changed = recipient.approved_at or recipient.created_at
        return f"Bank details changed {changed:%Y-%m-%d}"
    return "First payout to this recipient"


def valid_approvals(payout: Payout) -> list[Approval]:
    """This round's approvals, in order (uses the inbox's prefetch when present)."""
    rows = getattr(payout, "approvals_valid", None)
    if rows is None:
        rows = list(payout.approvals.filter(voided_at__isnull=True).select_related("approver"))
    return [row for row in rows if row.round == payout.approval_round]


def approvals_history(payout: Payout) -> QuerySet[Approval]:
    return payout.approvals.select_related("approver").order_by("created_at", "pk")


@dataclass(frozen=True)
class PolicyImpact:
    payout: Payout
    required_now: int
    required_under_new: int


def policy_impact(
    *,
    rules: Sequence[RuleSpec],
    default: int,
    environment: Environment | None = None,
) -> list[PolicyImpact]:
    """Pending payouts whose count these rules would have changed (they keep theirs: stamped)."""
    payouts = Payout.objects.filter(status=S.PENDING_APPROVAL).select_related("recipient")
    if environment is not None:
        payouts = payouts.filter(environment=environment)
    impacts = []
    for payout in payouts.order_by("submitted_at", "pk"):
        would = approvals_required(
            rules,
            default=default,
            amount=payout.amount,
            currency=payout.currency,
            rail=payout.recipient.account_type,
            mode=payout.mode,
        )
        if would != payout.approvals_required:
            impacts.append(PolicyImpact(payout, payout.approvals_required, would))
    return impacts


def waiting_count(user: StaffUser, environment: Environment | None) -> int:
    return approval_inbox(user=user, environment=environment, scope=SCOPE_MINE).count()
