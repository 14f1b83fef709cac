"""Publishing an approval policy as an admin change (staff.changes): another admin approves it.

The proposal holds the draft (default count, rules, note); applying publishes it as the next
version, created by the proposer. A policy published meanwhile fails the proposal (its draft was
written against the version then in force)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied

from payouts.approval.policy import approval_policy_current, approval_policy_publish_apply
from payouts.approval.rules import RuleSpec
from payouts.models import ApprovalPolicy
from staff.changes import change_propose, register_change_kind
from staff.models import ChangeProposal, StaffUser
from staff.roles import APPROVAL_POLICY_MANAGE

KIND = "payouts.approval_policy"


def _rule_out(rule: RuleSpec) -> dict[str, Any]:
    return {
        key: str(value) if isinstance(value, Decimal) else value
        for key, value in dataclasses.asdict(rule).items()
    }


def _rule_in(data: dict[str, Any]) -> RuleSpec:
    return RuleSpec(**{**data, "min_amount": Decimal(str(data.get("min_amount", "0")))})


def _line(rule: RuleSpec) -> str:
    """A rule as the policy page writes it: minimum, currency, rail, mode, approvers (* any)."""
    parts = (rule.currency, rule.rail, rule.mode)
    return " ".join(
        [str(rule.min_amount), *(part or "*" for part in parts), str(rule.required_approvals)]
    )


def _policy_display(policy: ApprovalPolicy | None) -> dict[str, Any]:
    if policy is None:
        return {"version": "none (1 approver)", "default_required": 1, "rules": []}
    return {
        "version": policy.version,
        "default_required": policy.default_required,
        "rules": [_line(spec) for spec in policy.specs()],
        "note": policy.note,
    }


def approval_policy_propose(
    *, by: StaffUser, default_required: int, rules: Sequence[RuleSpec], note: str = ""
) -> ChangeProposal:
    """Propose the next policy version; it is published once another admin approves it."""
    if not by.has_perm(APPROVAL_POLICY_MANAGE):
        raise PermissionDenied("Publishing an approval policy needs the admin role.")
    if default_required < 1 or any(rule.required_approvals < 1 for rule in rules):
        raise ValueError("every count of approvers is at least 1")
    current = approval_policy_current()
    draft = [_rule_out(rule) for rule in rules]
    return change_propose(
        kind=KIND,
        by=by,
        target=current,
        target_label="approval policy",
        summary=f"Publish approval policy version {(current.version if current else 0) + 1}",
        before=_policy_display(current),
        after={
            "version": (current.version if current else 0) + 1,
            "default_required": default_required,
            "rules": [_line(rule) for rule in rules],
            "note": note,
        },
        payload={"default_required": default_required, "rules": draft, "note": note},
    )


def _version(proposal: ChangeProposal) -> str:
    current = approval_policy_current()
    return str(current.version if current else 0)


def _apply(proposal: ChangeProposal, *, by: StaffUser | None) -> None:
    approval_policy_publish_apply(
        by=by,
        created_by=proposal.proposed_by,
        default_required=int(proposal.payload["default_required"]),
        rules=[_rule_in(rule) for rule in proposal.payload["rules"]],
        note=str(proposal.payload.get("note", "")),
    )


def register_policy_change_kinds() -> None:
    register_change_kind(KIND, apply=_apply, version=_version, label="Approval policy")
