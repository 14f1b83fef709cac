"""Reads for maker-checker screens: the approval inbox, a payout's approvals, policy impact."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Exists, OuterRef, Prefetch, QuerySet
from django.utils import timezone

from gateway.models import Environment
from payouts.approval.policy import APPROVING_ROLES, NOT_COUNTED, approver_roles, payout_facts
from payouts.approval.rules import (
    ANY_APPROVER,
    LIMIT_MAKER,
    ApprovalFacts,
    Chain,
    ChainStep,
    LimitBreach,
    LimitSpec,
    RuleSpec,
    approval_chain,
    approval_decide,
    chain_label,
    chain_total,
    limit_breach,
)
from payouts.models import Approval, Payout, PayoutStatus, chain_from_json
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
        if not user.has_perm(PAYOUT_APPROVE) and not (approver_roles(user) & set(APPROVING_ROLES)):
            return payouts.none()
        # Approved in this round, or withdrew (a withdrawn approval is voided in its round).
        mine = Approval.objects.filter(
            payout=OuterRef("pk"), approver=user, round=OuterRef("approval_round")
        )
        payouts = (
            payouts.exclude(maker=user).exclude(recipient__created_by=user).exclude(Exists(mine))
        )
    return payouts


def approval_inbox_rows(
    *, user: StaffUser, environment: Environment | None, scope: str = SCOPE_MINE
) -> list[Payout]:
    """The inbox as rows. `mine` keeps only the payouts whose current chain step this person
    may fill now (the pure `approval_decide` on the prefetched approvals: no query per row), so
    an admin sees the payouts waiting for an admin step and an approver no longer sees those."""
    rows = list(approval_inbox(user=user, environment=environment, scope=scope))
    if scope != SCOPE_MINE:
        return rows
    roles = approver_roles(user)
    permitted = user.has_perm(PAYOUT_APPROVE)
    mine = []
    for payout in rows:
        approvals = valid_approvals(payout)
        facts = ApprovalFacts(
            pending=True,
            maker_id=payout.maker_id,
            recipient_creator_id=payout.recipient.created_by_id,
            approver_ids=[a.approver_id for a in approvals],
            required=payout.approvals_required,
            chain=chain_from_json(payout.approval_chain),
            approval_steps=[a.step for a in approvals],
        )
        decision = approval_decide(
            facts, approver_id=user.pk, has_permission=permitted, roles=roles
        )
        if decision.allowed:
            mine.append(payout)
    return mine


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
    """What a draft policy would change for one payout waiting now (it keeps its own chain:
    stamped at submission; the preview says what the same payout would need if submitted now)."""

    payout: Payout
    chain_now: Chain
    chain_new: Chain
    breach: LimitBreach | None

    @property
    def required_now(self) -> int:
        return chain_total(self.chain_now)

    @property
    def required_under_new(self) -> int:
        return chain_total(self.chain_new)

    @property
    def chain_now_label(self) -> str:
        return chain_label(self.chain_now)

    @property
    def chain_new_label(self) -> str:
        return chain_label(self.chain_new)

    @property
    def changed(self) -> bool:
        return self.chain_now != self.chain_new or self.breach is not None


def _limit_usage(
    payouts: Sequence[Payout], limits: Sequence[LimitSpec], now: datetime
) -> list[dict[int, Decimal]]:
    """For each payout, what each limit's subject submitted in the window, the payout itself
    left out (as if it were submitted now): one query, summed here in exact decimals."""
    if not limits or not payouts:
        return [{} for _ in payouts]
    earliest = min(limit.window_start(now) for limit in limits)
    counted = list(
        Payout.objects.filter(submitted_at__gte=earliest)
        .exclude(status__in=NOT_COUNTED)
        .values_list("pk", "maker_id", "recipient_id", "currency", "amount", "submitted_at")
    )
    usage = []
    for payout in payouts:
        used: dict[int, Decimal] = {}
        for index, limit in enumerate(limits):
            start = limit.window_start(now)
            subject = payout.maker_id if limit.subject == LIMIT_MAKER else payout.recipient_id
            used[index] = sum(
                (
                    amount
                    for pk, maker, recipient, currency, amount, at in counted
                    if pk != payout.pk
                    and at is not None
                    and at >= start
                    and currency.upper() == limit.currency.upper()
                    and (maker if limit.subject == LIMIT_MAKER else recipient) == subject
                ),
                Decimal("0"),
            )
        usage.append(used)
    return usage


def policy_impact(
    *,
    rules: Sequence[RuleSpec],
    default: int,
    limits: Sequence[LimitSpec] = (),
    environment: Environment | None = None,
) -> list[PolicyImpact]:
    """
    Every payout waiting for approval now: the chain it was stamped with, the chain the draft
    policy would give it, and the limit it would now exceed (if any), all from the pure
    decisions; nothing is written. A constant number of queries whatever the number of payouts.
    """
    payouts = (
        Payout.objects.filter(status=S.PENDING_APPROVAL)
        .select_related("recipient", "maker")
        .prefetch_related("maker__groups")
        .order_by("submitted_at", "pk")
    )
    if environment is not None:
        payouts = payouts.filter(environment=environment)
    rows = list(payouts)
    now = timezone.now()
    usage = _limit_usage(rows, limits, now)
    impacts = []
    for payout, used in zip(rows, usage, strict=True):
        roles = frozenset(group.name for group in payout.maker.groups.all())
        facts = payout_facts(payout, maker_roles=roles)
        stamped = chain_from_json(payout.approval_chain) or (
            ChainStep(ANY_APPROVER, payout.approvals_required),
        )
        impacts.append(
            PolicyImpact(
                payout=payout,
                chain_now=stamped,
                chain_new=approval_chain(rules, default=default, facts=facts),
                breach=limit_breach(
                    limits, amount=payout.amount, currency=payout.currency, used=used
                ),
            )
        )
    return impacts


def waiting_count(user: StaffUser, environment: Environment | None) -> int:
    return len(approval_inbox_rows(user=user, environment=environment, scope=SCOPE_MINE))
