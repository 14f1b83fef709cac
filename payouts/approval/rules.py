"""Maker-checker decisions, pure: which chain of approvers a payout needs, who may approve it
now, and whether a submission stays within the policy's amount limits."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

from django.utils.translation import gettext, gettext_lazy

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


ANY_APPROVER = ""  # a step anyone holding the approver permission may fill
CHANNEL_PAGE = "page"
CHANNEL_API = "api"
CHANNELS = (CHANNEL_PAGE, CHANNEL_API)


@dataclass(frozen=True)
class ChainStep:
    """One step of an approval chain: `count` distinct people holding `role` ("" any approver)."""

    role: str
    count: int

    def label(self) -> str:
        return f"{self.count} {self.role or 'approver'}"


Chain = tuple[ChainStep, ...]


def chain_total(chain: Sequence[ChainStep]) -> int:
    return sum(step.count for step in chain)


def chain_label(chain: Sequence[ChainStep]) -> str:
    return " then ".join(step.label() for step in chain)


@dataclass(frozen=True)
class PayoutFacts:
    """What a rule's conditions look at, read by the caller (the submission or the preview)."""

    amount: Decimal
    currency: str
    rail: str = ""
    mode: str = ""
    country: str = ""
    channel: str = ""
    maker_id: int | None = None
    maker_roles: frozenset[str] = frozenset()
    recipient_age_days: int | None = None  # whole days since the recipient was created


@dataclass(frozen=True)
class RuleSpec:
    """
    One line of an approval policy. Empty `currency`, `rail`, `mode`, `country` or `channel`
    match anything; the rule applies from `min_amount` (inclusive, in `currency` when it is set)
    upwards. `maker_ids`/`maker_roles`, when given, match a maker who is one of those people or
    holds one of those roles; `recipient_younger_than_days` matches a recipient created fewer
    than that many days ago. `chain`, when given, is the ordered steps the payout needs (and
    `required_approvals` is its total); otherwise one step of `required_approvals` approvers.
    """

    required_approvals: int
    min_amount: Decimal = Decimal("0")
    currency: str = ""
    rail: str = ""
    mode: str = ""
    chain: Chain = ()
    country: str = ""
    channel: str = ""
    maker_ids: frozenset[int] = field(default_factory=frozenset)
    maker_roles: frozenset[str] = field(default_factory=frozenset)
    recipient_younger_than_days: int | None = None

    def steps(self) -> Chain:
        return self.chain or (ChainStep(ANY_APPROVER, self.required_approvals),)

    def matches(
        self,
        facts: PayoutFacts | None = None,
        *,
        amount: Decimal | None = None,
        currency: str = "",
        rail: str = "",
        mode: str = "",
    ) -> bool:
        if facts is None:
            assert amount is not None
            facts = PayoutFacts(amount=amount, currency=currency, rail=rail, mode=mode)
        if self.currency and self.currency.upper() != facts.currency.upper():
            return False
        if self.rail and self.rail.upper() != facts.rail.upper():
            return False
        if self.mode and self.mode.lower() != facts.mode.lower():
            return False
        if self.country and self.country.upper() != facts.country.upper():
            return False
        if self.channel and self.channel != facts.channel:
            return False
        if (self.maker_ids or self.maker_roles) and not (
            facts.maker_id in self.maker_ids or self.maker_roles & facts.maker_roles
        ):
            return False
        if self.recipient_younger_than_days is not None and (
            facts.recipient_age_days is None
            or facts.recipient_age_days >= self.recipient_younger_than_days
        ):
            return False
        return facts.amount >= self.min_amount


def _demand(chain: Chain) -> tuple[int, int, int]:
    """How demanding a chain is: its people, then its steps, then its steps naming a role."""
    return (chain_total(chain), len(chain), sum(1 for step in chain if step.role))


def approval_chain(rules: Iterable[RuleSpec], *, default: int, facts: PayoutFacts) -> Chain:
    """
    The chain a payout needs: the most demanding among the matching rules' chains and the
    default's (one step of `default` approvers). Most demanding = the most people in all, then
    the most steps, then the most steps naming a role; on a full tie the earlier rule's. Like
    the count before it, adding a rule can only tighten the policy for the payouts it matches.
    """
    best: Chain = (ChainStep(ANY_APPROVER, max(1, default)),)
    for rule in rules:
        if rule.matches(facts):
            candidate = rule.steps()
            if _demand(candidate) > _demand(best):
                best = candidate
    return best


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
    facts = PayoutFacts(amount=amount, currency=currency, rail=rail, mode=mode)
    return max(1, chain_total(approval_chain(rules, default=default, facts=facts)))


class Refusal(enum.StrEnum):
    """Why an approver may not approve; each is a rule of segregation of duties or of state."""

    NOT_PERMITTED = "not_permitted"
    NOT_PENDING = "not_pending"
    MAKER = "maker"
    RECIPIENT_CREATOR = "recipient_creator"
    ALREADY_APPROVED = "already_approved"
    COMPLETE = "complete"
    NOT_YOUR_STEP = "not_your_step"
    WITHDRAWN = "withdrawn"


REFUSAL_MESSAGES: dict[Refusal, StrOrPromise] = {
    Refusal.NOT_PERMITTED: gettext_lazy("You do not hold the approver permission."),
    Refusal.NOT_PENDING: gettext_lazy("This payout is not waiting for approval."),
    Refusal.MAKER: gettext_lazy("You prepared this payout; someone else must approve it."),
    Refusal.RECIPIENT_CREATOR: gettext_lazy(
        "You created this payout's recipient; someone else must approve."
    ),
    Refusal.ALREADY_APPROVED: gettext_lazy(
        "You have already approved this payout; a person counts once."
    ),
    Refusal.COMPLETE: gettext_lazy("This payout already has all the approvals it needs."),
    Refusal.NOT_YOUR_STEP: gettext_lazy(
        "This payout waits for a step of its chain that your role cannot fill."
    ),
    Refusal.WITHDRAWN: gettext_lazy(
        "You withdrew your approval of this payout; another approver must approve."
    ),
}


@dataclass(frozen=True)
class ApprovalFacts:
    """What the decision needs, read under the payout's row lock by the service.

    `approver_ids` are this round's valid approvals in order and `approval_steps` the chain step
    each counted for (parallel; empty: filled in order). `chain` empty: one step of `required`.
    """

    pending: bool
    maker_id: int | None
    recipient_creator_id: int | None
    approver_ids: Sequence[int]
    required: int
    chain: Sequence[ChainStep] = ()
    approval_steps: Sequence[int] = ()
    withdrawn_ids: Sequence[int] = ()  # who withdrew an approval in this round

    def steps(self) -> Chain:
        return tuple(self.chain) or (ChainStep(ANY_APPROVER, self.required),)

    def filled(self) -> list[int]:
        """How many approvals each step has."""
        steps = self.steps()
        counts = [0] * len(steps)
        if self.approval_steps:
            for index in self.approval_steps:
                if 0 <= index < len(counts):
                    counts[index] += 1
            return counts
        remaining = len(set(self.approver_ids))
        for index, step in enumerate(steps):
            counts[index] = min(step.count, remaining)
            remaining -= counts[index]
        return counts

    def current_step(self) -> int | None:
        """The first step still short of approvals (None: the chain is complete)."""
        for index, (step, done) in enumerate(zip(self.steps(), self.filled(), strict=True)):
            if done < step.count:
                return index
        return None


@dataclass(frozen=True)
class ApprovalDecision:
    allowed: bool
    refusal: Refusal | None = None
    count_after: int = 0  # distinct approvers once this one counts
    complete: bool = False  # this approval is the last one needed
    step: int | None = None  # the chain step this approval fills (or waits for)
    step_label: str = ""

    @property
    def message(self) -> str:
        if self.refusal is Refusal.NOT_YOUR_STEP and self.step is not None:
            return gettext(
                "This payout waits for step %(value)s of its chain (%(step_label)s); you do not "
                "hold that role."
            ) % {"value": self.step + 1, "step_label": self.step_label}
        return str(REFUSAL_MESSAGES[self.refusal]) if self.refusal else ""


def approval_decide(
    facts: ApprovalFacts,
    *,
    approver_id: int,
    has_permission: bool,
    roles: frozenset[str] = frozenset(),
) -> ApprovalDecision:
    """
    May `approver_id` approve now, and does that complete the payout's approvals? Steps are
    filled in order: only the current step counts, and a step naming a role is open only to
    people holding it (`roles`); an unnamed step to anyone with the approver permission.
    Eligibility is necessary, never sufficient: the maker, the recipient's creator, anyone who
    already approved (at any step) and anyone who withdrew their approval in this round (one
    person, one say per round) are refused whatever their roles.
    """
    distinct = set(facts.approver_ids)
    steps = facts.steps()
    current = facts.current_step()

    def eligible(step: ChainStep) -> bool:
        return step.role in roles if step.role else has_permission

    def refuse(refusal: Refusal) -> ApprovalDecision:
        label = steps[current].label() if current is not None else ""
        return ApprovalDecision(False, refusal, len(distinct), step=current, step_label=label)

    if not any(eligible(step) for step in steps):
        return refuse(Refusal.NOT_PERMITTED)
    if not facts.pending:
        return refuse(Refusal.NOT_PENDING)
    if facts.maker_id is not None and approver_id == facts.maker_id:
        return refuse(Refusal.MAKER)
    if facts.recipient_creator_id is not None and approver_id == facts.recipient_creator_id:
        return refuse(Refusal.RECIPIENT_CREATOR)
    if approver_id in distinct:
        return refuse(Refusal.ALREADY_APPROVED)
    if approver_id in facts.withdrawn_ids:
        return refuse(Refusal.WITHDRAWN)
    if current is None or len(distinct) >= chain_total(steps):
        return refuse(Refusal.COMPLETE)
    if not eligible(steps[current]):
        return refuse(Refusal.NOT_YOUR_STEP)
    filled = facts.filled()
    filled[current] += 1
    complete = all(done >= step.count for step, done in zip(steps, filled, strict=True))
    return ApprovalDecision(
        True, None, len(distinct) + 1, complete, step=current, step_label=steps[current].label()
    )


# --- Amount limits --------------------------------------------------------------------------

LIMIT_MAKER = "maker"
LIMIT_RECIPIENT = "recipient"
LIMIT_SUBJECTS = (LIMIT_MAKER, LIMIT_RECIPIENT)


@dataclass(frozen=True)
class LimitSpec:
    """
    At most `amount` (in `currency`, exact) submitted per maker or per recipient in a window:
    `days` = 0 is the calendar day (UTC), `days` = N a rolling window of the last N times 24 hours.
    """

    subject: str
    amount: Decimal
    currency: str
    days: int = 0

    def window(self) -> str:
        return "daily" if self.days == 0 else f"{self.days}-day rolling"

    def label(self) -> str:
        return f"{self.subject}'s {self.window()} limit of {self.amount} {self.currency}"

    def window_start(self, now: datetime) -> datetime:
        if self.days == 0:
            return now.replace(hour=0, minute=0, second=0, microsecond=0)
        return now - timedelta(days=self.days)


@dataclass(frozen=True)
class LimitBreach:
    limit: LimitSpec
    used: Decimal
    left: Decimal

    @property
    def message(self) -> str:
        return gettext("This payout would exceed the %(value)s: %(left)s %(currency)s is left.") % {
            "value": self.limit.label(),
            "left": self.left,
            "currency": self.limit.currency,
        }


def limit_breach(
    limits: Sequence[LimitSpec],
    *,
    amount: Decimal,
    currency: str,
    used: Mapping[int, Decimal],
) -> LimitBreach | None:
    """
    The first limit (in policy order) that `amount` would exceed, given `used[i]`, what the
    limit `limits[i]`'s subject has already submitted in its window (in the limit's currency;
    missing: nothing). Limits of another currency never apply: amounts are never converted.
    """
    for index, limit in enumerate(limits):
        if limit.currency.upper() != currency.upper():
            continue
        spent = used.get(index, Decimal("0"))
        left = max(Decimal("0"), limit.amount - spent)
        if amount > left:
            return LimitBreach(limit, spent, left)
    return None


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
