"""The rules a new installation starts with: one per kind of condition, so what goes wrong is
seen from the first run (the dashboard's Alerts panel, the history) before anyone writes a rule.

A bootstrap step (console.bootstrap), in every setting: it acts only while no rule exists at
all, so it never brings back a rule an admin disabled. The rules are created by the system
(`created_by` empty, audited with no actor); they cover every environment, take each kind's
default thresholds, and send nothing until someone subscribes or an admin adds a webhook.
"""

from __future__ import annotations

from django.conf import settings
from django.utils import translation

from alerts.conditions import CONDITIONS
from alerts.models import AlertRule, Severity
from alerts.services import rule_create

# Money not paid, or paid and lost, and accounts under attack need someone now; the rest can
# wait for the working day.
CRITICAL_KINDS = frozenset({"payout_failed", "payout_submitting", "sign_in_failures", "budget_low"})


def default_rules_create() -> str:
    if AlertRule.objects.exists():
        return "alert rules exist already: none added"
    with translation.override(settings.LANGUAGE_CODE):  # names are stored text
        for condition in CONDITIONS.values():
            rule_create(
                by=None,
                name=str(condition.label),
                kind=condition.kind,
                thresholds={t.name: t.default for t in condition.thresholds},
                environment=None,
                severity=Severity.CRITICAL
                if condition.kind in CRITICAL_KINDS
                else Severity.WARNING,
            )
    return f"{len(CONDITIONS)} default alert rules created, one per kind"
