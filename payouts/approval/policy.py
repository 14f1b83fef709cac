"""Approval policy: publish a new version, read the one in force, what it asks of a payout."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext

from payouts.approval.rules import (
    CHANNELS,
    LIMIT_MAKER,
    LIMIT_SUBJECTS,
    Chain,
    ChainStep,
    LimitBreach,
    LimitSpec,
    PayoutFacts,
    RuleSpec,
    approval_chain,
    chain_total,
    limit_breach,
)
from payouts.models import (
    ApprovalPolicy,
    ApprovalRule,
    Payout,
    PayoutStatus,
    chain_from_json,
    chain_to_json,
    limit_to_json,
)
from staff.actions import record_action
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.roles import APPROVAL_POLICY_MANAGE as POLICY_MANAGE
from staff.roles import ROLES_BY_KEY, SCOPE_APPROVE, user_roles
from staff.step_up import proof_of, step_up_require

DEFAULT_REQUIRED = 1
CENT = Decimal("0.01")
# The roles a chain step may name: the ones whose holders approve payouts (an admin approves
# only where a step names the admin role).
APPROVING_ROLES = ("finance_approver", "admin")
# What a limit counts: everything submitted and not withdrawn, refused or failed.
NOT_COUNTED = (
    PayoutStatus.DRAFT,
    PayoutStatus.REJECTED,
    PayoutStatus.CANCELLED,
    PayoutStatus.FAILED,
)


def approval_policy_current() -> ApprovalPolicy | None:
    """The newest published version (None before the first one: one approver, the default)."""
    return ApprovalPolicy.objects.prefetch_related("rules").order_by("-version").first()


def required_for(
    policy: ApprovalPolicy | None, *, amount: Decimal, currency: str, rail: str, mode: str
) -> int:
    facts = PayoutFacts(amount=amount, currency=currency, rail=rail, mode=mode)
    return chain_total(chain_for(policy, facts))


def chain_for(policy: ApprovalPolicy | None, facts: PayoutFacts) -> Chain:
    if policy is None:
        return (ChainStep("", DEFAULT_REQUIRED),)
    return approval_chain(policy.specs(), default=policy.default_required, facts=facts)


def payout_facts(payout: Payout, *, maker_roles: frozenset[str] | None = None) -> PayoutFacts:
    """What the rules' conditions look at, for one payout (its recipient and maker loaded)."""
    recipient = payout.recipient
    if maker_roles is None:
        maker_roles = frozenset(payout.maker.groups.values_list("name", flat=True))
    age = (timezone.now() - recipient.created_at).days if recipient.created_at else None
    return PayoutFacts(
        amount=payout.amount,
        currency=payout.currency,
        rail=recipient.account_type,
        mode=payout.mode,
        country=recipient.country,
        channel=payout.channel,
        maker_id=payout.maker_id,
        maker_roles=maker_roles,
        recipient_age_days=age,
    )


def limits_used(payout: Payout, limits: Sequence[LimitSpec]) -> dict[int, Decimal]:
    """What each limit's subject (this payout's maker or recipient) has submitted in its window,
    this payout excluded: exact sums in the limit's currency."""
    now = timezone.now()
    used = {}
    for index, limit in enumerate(limits):
        if limit.currency.upper() != payout.currency.upper():
            continue
        rows = Payout.objects.filter(
            currency__iexact=limit.currency,
            submitted_at__gte=limit.window_start(now),
        ).exclude(status__in=NOT_COUNTED)
        rows = rows.exclude(pk=payout.pk)
        if limit.subject == LIMIT_MAKER:
            rows = rows.filter(maker_id=payout.maker_id)
        else:
            rows = rows.filter(recipient_id=payout.recipient_id)
        total = rows.aggregate(total=Sum("amount"))["total"] or Decimal("0")
        used[index] = Decimal(total).quantize(CENT)  # amounts have 2 places: exact
    return used


def limit_breach_of(payout: Payout, policy: ApprovalPolicy | None) -> LimitBreach | None:
    if policy is None or not policy.limits:
        return None
    limits = policy.limit_specs()
    return limit_breach(
        limits, amount=payout.amount, currency=payout.currency, used=limits_used(payout, limits)
    )


def recipient_approver_roles_current() -> list[str]:
    """The roles the policy in force lets approve a recipient: the provider payouts registers
    with accounts' dual control (`register_recipient_approver_roles`). Empty (no policy, or
    none named): accounts falls back to its setting, never to nobody."""
    policy = approval_policy_current()
    return list(policy.recipient_approver_roles) if policy is not None else []


def approver_roles(user: StaffUser) -> frozenset[str]:
    """The roles that let `user` fill a chain step naming them. A request by an API token fills
    one only when the token may approve (its `approve` scope): a token never does more than its
    scopes, whatever its owner's roles."""
    proof = proof_of(user)
    if proof is not None and proof.scopes is not None and SCOPE_APPROVE not in proof.scopes:
        return frozenset()
    return frozenset(role.key for role in user_roles(user))


class PolicyInvalid(ServiceError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, code="invalid_policy", errors=[(field, message)], status=400)


def policy_validate(
    *,
    default_required: int,
    rules: Sequence[RuleSpec],
    limits: Sequence[LimitSpec] = (),
    recipient_approver_roles: Sequence[str] = (),
) -> None:
    """Refuse a policy that names an unknown role, channel or subject, or counts below one."""
    if default_required < 1:
        raise PolicyInvalid("default_required", gettext("Every count of approvers is at least 1."))
    for number, rule in enumerate(rules, start=1):
        if rule.required_approvals < 1 or any(step.count < 1 for step in rule.chain):
            raise PolicyInvalid(
                "rules",
                gettext("Rule %(number)s: every count of approvers is at least 1.")
                % {"number": number},
            )
        not_approving = {s.role for s in rule.chain if s.role} - set(APPROVING_ROLES)
        if not_approving:
            raise PolicyInvalid(
                "rules",
                gettext(
                    "Rule %(number)s: a step names a role that approves payouts (%(value)s), not "
                    "%(value2)s."
                )
                % {
                    "number": number,
                    "value": ", ".join(APPROVING_ROLES),
                    "value2": ", ".join(sorted(not_approving)),
                },
            )
        unknown = set(rule.maker_roles) - ROLES_BY_KEY.keys()
        if unknown:
            raise PolicyInvalid(
                "rules",
                gettext("Rule %(number)s: no role %(value)s.")
                % {"number": number, "value": ", ".join(sorted(unknown))},
            )
        if rule.channel and rule.channel not in CHANNELS:
            raise PolicyInvalid(
                "rules",
                gettext("Rule %(number)s: the channel is page or api.") % {"number": number},
            )
    for number, limit in enumerate(limits, start=1):
        if limit.subject not in LIMIT_SUBJECTS or limit.amount <= 0 or limit.days < 0:
            raise PolicyInvalid(
                "limits",
                gettext("Limit %(number)s: maker or recipient, an amount above 0, days ≥ 0.")
                % {"number": number},
            )
    unknown_roles = set(recipient_approver_roles) - ROLES_BY_KEY.keys()
    if unknown_roles:
        raise PolicyInvalid(
            "recipient_approver_roles",
            gettext("No role %(value)s.") % {"value": ", ".join(sorted(unknown_roles))},
        )


def rule_to_json(rule: RuleSpec) -> dict[str, object]:
    return {
        "min_amount": str(rule.min_amount),
        "currency": rule.currency,
        "rail": rule.rail,
        "mode": rule.mode,
        "required_approvals": rule.required_approvals,
        "chain": chain_to_json(rule.chain),
        "country": rule.country,
        "channel": rule.channel,
        "maker_ids": sorted(rule.maker_ids),
        "maker_roles": sorted(rule.maker_roles),
        "recipient_younger_than_days": rule.recipient_younger_than_days,
    }


def rule_from_json(data: dict[str, object]) -> RuleSpec:
    """The inverse of rule_to_json (a proposal's draft held as JSON)."""
    return RuleSpec(
        required_approvals=int(str(data["required_approvals"])),
        min_amount=Decimal(str(data.get("min_amount", "0"))),
        currency=str(data.get("currency", "")),
        rail=str(data.get("rail", "")),
        mode=str(data.get("mode", "")),
        chain=chain_from_json(data.get("chain") or []),  # type: ignore[arg-type]
        country=str(data.get("country", "")),
        channel=str(data.get("channel", "")),
        maker_ids=frozenset(int(pk) for pk in data.get("maker_ids") or []),  # type: ignore[attr-defined]
        maker_roles=frozenset(str(role) for role in data.get("maker_roles") or []),  # type: ignore[attr-defined]
        recipient_younger_than_days=(
            None
            if data.get("recipient_younger_than_days") is None
            else int(str(data["recipient_younger_than_days"]))
        ),
    )


def approval_policy_publish(
    *,
    by: StaffUser,
    default_required: int,
    rules: Sequence[RuleSpec],
    note: str = "",
    limits: Sequence[LimitSpec] = (),
    recipient_approver_roles: Sequence[str] = (),
) -> ApprovalPolicy:
    """Publish the next version; payouts already submitted keep theirs (audited with both).

    Step-up (`approval_policy.publish`): the policy decides who must approve a payout, so
    changing it needs a fresh second factor. Every argument is plain data (a proposal can hold
    it and publish it later).
    """
    if not by.has_perm(POLICY_MANAGE):
        raise PermissionDenied(gettext("Publishing an approval policy needs the admin role."))
    step_up_require(by, action="approval_policy.publish")
    policy_validate(
        default_required=default_required,
        rules=rules,
        limits=limits,
        recipient_approver_roles=recipient_approver_roles,
    )
    return approval_policy_publish_apply(
        by=by,
        created_by=by,
        default_required=default_required,
        rules=rules,
        note=note,
        limits=limits,
        recipient_approver_roles=recipient_approver_roles,
    )


def approval_policy_publish_apply(
    *,
    by: StaffUser | None,
    created_by: StaffUser,
    default_required: int,
    rules: Sequence[RuleSpec],
    note: str = "",
    limits: Sequence[LimitSpec] = (),
    recipient_approver_roles: Sequence[str] = (),
) -> ApprovalPolicy:
    """The write of a publication, audited as `by` (None: the system); its callers checked who
    may (approval_policy_publish, or an approved admin change: payouts.approval.policy_changes,
    where `created_by` is the proposer). The policy is validated again: a proposal's draft is
    data that waited."""
    policy_validate(
        default_required=default_required,
        rules=rules,
        limits=limits,
        recipient_approver_roles=recipient_approver_roles,
    )
    with transaction.atomic():
        # Lock the newest row so two admins publishing at once get versions n+1 and n+2 (the
        # unique version refuses the loser of a race on the very first publication).
        newest = ApprovalPolicy.objects.select_for_update().order_by("-version").first()
        previous = newest.version if newest else 0
        policy = ApprovalPolicy.objects.create(
            version=previous + 1,
            default_required=default_required,
            note=note,
            created_by=created_by,
            limits=[limit_to_json(limit) for limit in limits],
            recipient_approver_roles=list(recipient_approver_roles),
        )
        ApprovalRule.objects.bulk_create(
            ApprovalRule(
                policy=policy,
                min_amount=rule.min_amount,
                currency=rule.currency.upper(),
                rail=rule.rail.upper(),
                mode=rule.mode.lower(),
                required_approvals=chain_total(rule.chain) or rule.required_approvals,
                chain=chain_to_json(rule.chain),
                country=rule.country.upper(),
                channel=rule.channel,
                maker_ids=sorted(rule.maker_ids),
                maker_roles=sorted(rule.maker_roles),
                recipient_younger_than_days=rule.recipient_younger_than_days,
            )
            for rule in rules
        )
        # The policy page is read on demand; the payouts it decides announce their own moves.
        record_action(
            announce=False,
            actor=by,
            action="approval_policy.published",
            target=policy,
            before={"version": previous or None},
            after={"version": policy.version, "default_required": default_required},
            details={
                "version": policy.version,
                "previous_version": previous or None,
                "default_required": default_required,
                "rules": [rule_to_json(rule) for rule in rules],
                "limits": [limit_to_json(limit) for limit in limits],
                "recipient_approver_roles": list(recipient_approver_roles),
                "note": note,
            },
        )
    return policy
