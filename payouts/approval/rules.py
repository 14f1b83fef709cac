"""Maker-checker decisions, pure: how many approvers a payout needs and who may approve it."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class RuleSpec:
    """
    One line of an approval policy. Empty `currency`, `rail` or `mode` match anything; the rule
    applies from `min_amount` (inclusive, in `currency` when it is set) upwards.
    """

    required_approvals: int
    min_amount: Decimal = Decimal("0")
    currency: str = ""
    rail: str = ""
    mode: str = ""

    def matches(self, *, amount: Decimal, currency: str, rail: str, mode: str) -> bool:
        if self.currency and self.currency.upper() != currency.upper():
            return False
        if self.rail and self.rail.upper() != rail.upper():
            return False
        if self.mode and self.mode.lower() != mode.lower():
            return False
        return amount >= self.min_amount


def approvals_required(
    rules: Iterable[RuleSpec],
    *,
    default: int,
    amount: Decimal,
    currency: str,
    rail: str,
    mode: str,
) -> int:
    """
    The number of distinct approvers a payout needs: the strictest matching rule, never fewer
    than `default`. Strictest wins (not "first match") so that adding a rule can only tighten
    the policy for the payouts it matches, and rule order can never loosen it by accident.
    """
    required = default
    for rule in rules:
        if rule.matches(amount=amount, currency=currency, rail=rail, mode=mode):
            required = max(required, rule.required_approvals)
    return max(1, required)


class Refusal(enum.StrEnum):
    """Why an approver may not approve; each is a rule of segregation of duties or of state."""

    NOT_PERMITTED = "not_permitted"
    NOT_PENDING = "not_pending"
    MAKER = "maker"
    RECIPIENT_CREATOR = "recipient_creator"
    ALREADY_APPROVED = "already_approved"
    COMPLETE = "complete"


REFUSAL_MESSAGES: dict[Refusal, str] = {
    Refusal.NOT_PERMITTED: "You do not hold the approver permission.",
    Refusal.NOT_PENDING: "This payout is not waiting for approval.",
    Refusal.MAKER: "You prepared this payout; someone else must approve it.",
    Refusal.RECIPIENT_CREATOR: "You created this payout's recipient; someone else must approve.",
    Refusal.ALREADY_APPROVED: "You have already approved this payout; a person counts once.",
    Refusal.COMPLETE: "This payout already has all the approvals it needs.",
}


@dataclass(frozen=True)
class ApprovalFacts:
    """What the decision needs, read under the payout's row lock by the service."""

    pending: bool
    maker_id: int | None
    recipient_creator_id: int | None
    approver_ids: Sequence[int]  # valid approvals already given, in order
    required: int


@dataclass(frozen=True)
class ApprovalDecision:
    allowed: bool
    refusal: Refusal | None = None
    count_after: int = 0  # distinct approvers once this one counts
    complete: bool = False  # this approval is the last one needed

    @property
    def message(self) -> str:
        return REFUSAL_MESSAGES[self.refusal] if self.refusal else ""


def approval_decide(
    facts: ApprovalFacts, *, approver_id: int, has_permission: bool
) -> ApprovalDecision:
    """
    May `approver_id` approve now, and does that complete the payout's approvals? Holding the
    approver role is necessary, never sufficient: the maker, the recipient's creator and anyone
    who already approved are refused whatever their roles.
    """
    distinct = set(facts.approver_ids)
    if not has_permission:
        return ApprovalDecision(False, Refusal.NOT_PERMITTED, len(distinct))
    if not facts.pending:
        return ApprovalDecision(False, Refusal.NOT_PENDING, len(distinct))
    if facts.maker_id is not None and approver_id == facts.maker_id:
        return ApprovalDecision(False, Refusal.MAKER, len(distinct))
    if facts.recipient_creator_id is not None and approver_id == facts.recipient_creator_id:
        return ApprovalDecision(False, Refusal.RECIPIENT_CREATOR, len(distinct))
    if approver_id in distinct:
        return ApprovalDecision(False, Refusal.ALREADY_APPROVED, len(distinct))
    if len(distinct) >= facts.required:
        return ApprovalDecision(False, Refusal.COMPLETE, len(distinct))
    after = len(distinct) + 1
    return ApprovalDecision(True, None, after, after >= facts.required)


def approvals_kept_after_requote(
    *, approved: Decimal, requoted: Decimal, tolerance: Decimal
) -> bool:
    """
    Approvals survive a re-quote only when the new figure is within `tolerance` (a fraction,
    0.01 = 1 %) of the approved one, in either direction: approvers approved a figure, and a
    change beyond what they can be assumed to accept must be approved again.
    """
    if approved == requoted:
        return True
    if approved == 0:
        return False
    return abs(requoted - approved) / abs(approved) <= tolerance
