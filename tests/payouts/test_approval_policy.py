"""Publishing the approval policy: admins only, versioned, audited, counted by the pure rules."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied

from payouts.approval.policy import approval_policy_current, approval_policy_publish, required_for
from payouts.approval.rules import RuleSpec
from staff.models import AuditEntry, StaffUser

RULES = [RuleSpec(required_approvals=2, min_amount=Decimal("10000"), currency="usd")]


def test_admin_publishes_versions_and_each_is_audited(staff: dict[str, StaffUser]) -> None:
    first = approval_policy_publish(by=staff["admin"], default_required=1, rules=RULES)
    second = approval_policy_publish(by=staff["admin"], default_required=1, rules=[], note="x")
    assert (first.version, second.version) == (1, 2)
    assert approval_policy_current() == second
    entries = AuditEntry.objects.filter(action="approval_policy.published").order_by("id")
    assert [e.details["version"] for e in entries] == [1, 2]
    assert entries[1].details["previous_version"] == 1
    assert entries[0].details["rules"][0]["required_approvals"] == 2


@pytest.mark.parametrize("who", ["maker", "approver"])
def test_only_admins_publish_a_policy(staff: dict[str, StaffUser], who: str) -> None:
    with pytest.raises(PermissionDenied):
        approval_policy_publish(by=staff[who], default_required=1, rules=RULES)


def test_published_rules_decide_the_count(staff: dict[str, StaffUser]) -> None:
    policy = approval_policy_publish(by=staff["admin"], default_required=1, rules=RULES)
    facts = {"currency": "USD", "rail": "SPEI", "mode": "fiat"}
    assert required_for(policy, amount=Decimal("9999.99"), **facts) == 1
    assert required_for(policy, amount=Decimal("10000"), **facts) == 2
    assert required_for(None, amount=Decimal("10000000"), **facts) == 1
