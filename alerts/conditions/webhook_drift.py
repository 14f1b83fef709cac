"""Kind `webhook_drift`: webhook events that drift from the contract (webhooks.contract)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from alerts.conditions import Subjects, Threshold, register_condition, threshold_value
from alerts.conditions._common import applies_to, environment_subject
from console.sentences import summary
from gateway.models import Environment
from webhooks.services.gaps import drift_summary

if TYPE_CHECKING:
    from alerts.models import AlertRule


def drift(rule: AlertRule, now: datetime) -> Subjects:
    since = now - timedelta(minutes=threshold_value(rule, "window_minutes"))
    at_least = threshold_value(rule, "events")
    found: Subjects = {}
    for environment in Environment.objects.filter(is_active=True):
        if not applies_to(rule, environment):
            continue
        drifted = drift_summary(since=since, environment=environment)
        if drifted["events"] >= at_least:
            kinds = ", ".join(sorted(drifted["by_kind"]))
            found[environment_subject(environment)] = summary(
                gettext_noop(
                    "%(environment)s: %(count)s webhook events drift from the contract (%(kinds)s)"
                ),
                environment=environment.name,
                count=drifted["events"],
                kinds=kinds,
            )
    return found


def register() -> None:
    register_condition(
        "webhook_drift",
        drift,
        label=_("Webhook contract drift"),
        description=_(
            "At least the number of events given drifted from the upstream's contract within "
            "the window."
        ),
        thresholds=(
            Threshold("events", _("Drifting events"), 1, 1, 100000),
            Threshold("window_minutes", _("Window (minutes)"), 60, 1, 10080),
        ),
    )
