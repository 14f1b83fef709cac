"""Kind `budget_low`: the week's upstream budget left below a percentage (gateway's gauges)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from alerts.conditions import Subjects, Threshold, register_condition, threshold_value
from alerts.conditions._common import applies_to, environment_subject
from console.sentences import summary
from gateway.selectors import quota_gauges

if TYPE_CHECKING:
    from alerts.models import AlertRule


def budget_low(rule: AlertRule, now: datetime) -> Subjects:
    level = threshold_value(rule, "percent_left")
    found: Subjects = {}
    for gauge in quota_gauges(now=now):
        if not applies_to(rule, gauge.environment) or not gauge.budget:
            continue
        left = 100 * gauge.remaining / gauge.budget
        if left < level:
            found[environment_subject(gauge.environment)] = summary(
                gettext_noop(
                    "%(environment)s: %(remaining)s of the week's %(budget)s upstream calls left "
                    "(below %(level)s%%)"
                ),
                environment=gauge.environment.name,
                remaining=gauge.remaining,
                budget=gauge.budget,
                level=level,
            )
    return found


def register() -> None:
    register_condition(
        "budget_low",
        budget_low,
        label=_("Weekly upstream budget low"),
        description=_("The share of this week's upstream budget left is below the level given."),
        thresholds=(Threshold("percent_left", _("Budget left below (%)"), 20, 1, 100),),
    )
