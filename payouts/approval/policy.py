"""Approval policy: publish a new version, read the one in force, count what it requires."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from django.core.exceptions import PermissionDenied
from django.db import transaction

from payouts.approval.rules import RuleSpec, approvals_required
from payouts.models import ApprovalPolicy, ApprovalRule
from staff.models import StaffUser
from staff.roles import APPROVAL_POLICY_MANAGE as POLICY_MANAGE
from staff.services import audit_record
from staff.step_up import step_up_require

DEFAULT_REQUIRED = 1


def approval_policy_current() -> ApprovalPolicy | None:
    """The newest published version (None before the first one: one approver, the default)."""
    return ApprovalPolicy.objects.prefetch_related("rules").order_by("-version").first()


def required_for(
    policy: ApprovalPolicy | None, *, amount: Decimal, currency: str, rail: str, mode: str
) -> int:
    if policy is None:
        return DEFAULT_REQUIRED
    return approvals_required(
        policy.specs(),
        default=policy.default_required,
        amount=amount,
        currency=currency,
        rail=rail,
        mode=mode,
    )


def approval_policy_publish(
    *, by: StaffUser, default_required: int, rules: Sequence[RuleSpec], note: str = ""
) -> ApprovalPolicy:
    """Publish the next version; payouts already submitted keep theirs (audited with both).

    Step-up (`approval_policy.publish`): the policy decides how many people must approve a
    payout, so changing it needs a fresh second factor.
    """
    if not by.has_perm(POLICY_MANAGE):
        raise PermissionDenied("Publishing an approval policy needs the admin role.")
    step_up_require(by, action="approval_policy.publish")
    if default_required < 1 or any(rule.required_approvals < 1 for rule in rules):
        raise ValueError("every count of approvers is at least 1")
    with transaction.atomic():
        # Lock the newest row so two admins publishing at once get versions n+1 and n+2 (the
        # unique version refuses the loser of a race on the very first publication).
        newest = ApprovalPolicy.objects.select_for_update().order_by("-version").first()
        previous = newest.version if newest else 0
        policy = ApprovalPolicy.objects.create(
            version=previous + 1,
            default_required=default_required,
            note=note,
            created_by=by,
        )
        ApprovalRule.objects.bulk_create(
            ApprovalRule(
                policy=policy,
                min_amount=rule.min_amount,
                currency=rule.currency.upper(),
                rail=rule.rail.upper(),
                mode=rule.mode.lower(),
                required_approvals=rule.required_approvals,
            )
            for rule in rules
        )
        audit_record(
            actor=by,
            action="approval_policy.published",
            target=policy,
            before={"version": previous or None},
            after={"version": policy.version, "default_required": default_required},
            details={
                "version": policy.version,
                "previous_version": previous or None,
                "default_required": default_required,
                "rules": [
                    {
                        "min_amount": rule.min_amount,
                        "currency": rule.currency,
                        "rail": rule.rail,
                        "mode": rule.mode,
                        "required_approvals": rule.required_approvals,
                    }
                    for rule in rules
                ],
                "note": note,
            },
        )
    return policy
