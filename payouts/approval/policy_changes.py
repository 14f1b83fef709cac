"""Publishing an approval policy as an admin change (staff.changes): another admin approves it.

The proposal holds the draft (default count, rules, note); applying publishes it as the next
version, created by the proposer. A policy published meanwhile fails the proposal (its draft was
written against the version then in force)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext, gettext_lazy

from payouts.approval.forms import limit_line, rule_spec_line
from payouts.approval.policy import (
    approval_policy_current,
    approval_policy_publish_apply,
    policy_validate,
    rule_from_json,
    rule_to_json,
)
from payouts.approval.rules import LimitSpec, RuleSpec
from payouts.models import ApprovalPolicy, limit_from_json, limit_to_json
from staff.changes import change_propose, register_change_kind
from staff.models import ChangeProposal, StaffUser
from staff.roles import APPROVAL_POLICY_MANAGE

KIND = "payouts.approval_policy"


def _policy_display(policy: ApprovalPolicy | None) -> dict[str, Any]:
    if policy is None:
        return {"version": "none (1 approver)", "default_required": 1, "rules": []}
    return {
        "version": policy.version,
        "default_required": policy.default_required,
        "rules": [rule_spec_line(spec) for spec in policy.specs()],
        "limits": [limit_line(limit) for limit in policy.limit_specs()],
        "recipient_approver_roles": list(policy.recipient_approver_roles),
        "note": policy.note,
    }


def approval_policy_propose(
    *,
    by: StaffUser,
    default_required: int,
    rules: Sequence[RuleSpec],
    note: str = "",
    limits: Sequence[LimitSpec] = (),
    recipient_approver_roles: Sequence[str] = (),
) -> ChangeProposal:
    """Propose the next policy version; it is published once another admin approves it."""
    if not by.has_perm(APPROVAL_POLICY_MANAGE):
        raise PermissionDenied(gettext("Publishing an approval policy needs the admin role."))
    policy_validate(
        default_required=default_required,
        rules=rules,
        limits=limits,
        recipient_approver_roles=recipient_approver_roles,
    )
    current = approval_policy_current()
    version = (current.version if current else 0) + 1
    return change_propose(
        kind=KIND,
        by=by,
        target=current,
        target_label="approval policy",
        summary=f"Publish approval policy version {version}",
        before=_policy_display(current),
        after={
            "version": version,
            "default_required": default_required,
            "rules": [rule_spec_line(rule) for rule in rules],
            "limits": [limit_line(limit) for limit in limits],
            "recipient_approver_roles": list(recipient_approver_roles),
            "note": note,
        },
        payload={
            "default_required": default_required,
            "rules": [rule_to_json(rule) for rule in rules],
            "limits": [limit_to_json(limit) for limit in limits],
            "recipient_approver_roles": list(recipient_approver_roles),
            "note": note,
        },
    )


def _version(proposal: ChangeProposal) -> str:
    current = approval_policy_current()
    return str(current.version if current else 0)


def _apply(proposal: ChangeProposal, *, by: StaffUser | None) -> None:
    payload = proposal.payload
    approval_policy_publish_apply(
        by=by,
        created_by=proposal.proposed_by,
        default_required=int(payload["default_required"]),
        rules=[rule_from_json(rule) for rule in payload["rules"]],
        limits=[limit_from_json(limit) for limit in payload.get("limits", [])],
        recipient_approver_roles=[str(r) for r in payload.get("recipient_approver_roles", [])],
        note=str(payload.get("note", "")),
    )


def register_policy_change_kinds() -> None:
    register_change_kind(
        KIND, apply=_apply, version=_version, label=gettext_lazy("Approval policy")
    )
