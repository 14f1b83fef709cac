"""A new installation starts with one alert rule per kind (alerts.bootstrap), created by the
system, once: a rule an admin later disables is never brought back."""

from __future__ import annotations

from typing import Any

import pytest

from alerts.bootstrap import default_rules_create
from alerts.conditions import CONDITIONS
from alerts.models import AlertRule
from alerts.services import rule_set_enabled
from staff.models import AuditEntry, StaffUser

pytestmark = pytest.mark.django_db


def bootstrap() -> str:
    """The step as `manage.py payops_bootstrap` runs it (console.bootstrap's registry)."""
    from console.bootstrap import BOOTSTRAP_STEPS

    (step,) = [step for step in BOOTSTRAP_STEPS if step.name == "alerts.default_rules"]
    assert step.run is default_rules_create
    return step.run()


def test_the_first_bootstrap_creates_one_enabled_rule_per_kind_by_the_system() -> None:
    output = bootstrap()

    rules = {rule.kind: rule for rule in AlertRule.objects.all()}
    assert set(rules) == set(CONDITIONS) and len(rules) == AlertRule.objects.count()
    for kind, rule in rules.items():
        condition = CONDITIONS[kind]
        assert rule.enabled and rule.environment is None and rule.created_by is None
        assert rule.thresholds == {t.name: t.default for t in condition.thresholds}
        assert rule.name == str(condition.label)
    assert rules["payout_failed"].severity == "critical"
    assert rules["webhook_drift"].severity == "warning"
    created = AuditEntry.objects.filter(action="alerts.rule_created")
    assert created.count() == len(CONDITIONS) and not created.exclude(actor=None).exists()
    assert f"{len(CONDITIONS)} default alert rules created" in output


def test_a_later_bootstrap_adds_nothing_and_keeps_a_disabled_rule_disabled(
    demo_staff: dict[str, StaffUser],
) -> None:
    bootstrap()
    rule = AlertRule.objects.get(kind="webhook_drift")
    rule_set_enabled(rule=rule, enabled=False, by=demo_staff["admin"])

    output = bootstrap()

    assert AlertRule.objects.count() == len(CONDITIONS)
    rule.refresh_from_db()
    assert rule.enabled is False
    assert "alert rules exist already" in output


def test_the_api_says_a_default_rule_was_made_by_the_system(client_for: Any) -> None:
    bootstrap()
    rules = client_for("auditor").get("/api/v1/alerts/rules").json()
    assert len(rules) == len(CONDITIONS)
    assert {rule["created_by"] for rule in rules} == {None}
