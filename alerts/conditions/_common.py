"""What the condition modules share: the rule's environment filter and the subjects' names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway.models import Environment

if TYPE_CHECKING:
    from alerts.models import AlertRule


def applies_to(rule: AlertRule, environment: Environment) -> bool:
    """A rule without an environment watches every active one."""
    return rule.environment_id is None or rule.environment_id == environment.pk


def environment_subject(environment: Environment) -> str:
    return f"environment:{environment.pk}"


def payout_subject(payout_id: int) -> str:
    return f"payout:{payout_id}"
