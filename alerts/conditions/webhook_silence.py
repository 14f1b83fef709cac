"""Kind `webhook_silence`: no valid webhook event for N minutes while objects are in flight."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from alerts.conditions import Subjects, Threshold, register_condition, threshold_value
from alerts.conditions._common import applies_to, environment_subject
from console.sentences import summary
from webhooks.services.gaps import silences

if TYPE_CHECKING:
    from alerts.models import AlertRule


def silence(rule: AlertRule, now: datetime) -> Subjects:
    found = silences(now=now, minutes=threshold_value(rule, "minutes"))
    return {
        environment_subject(s.environment): summary(
            gettext_noop(
                "%(environment)s: no valid webhook event for more than %(minutes)s min while "
                "%(count)s objects are in flight"
            ),
            environment=s.environment.name,
            minutes=s.minutes,
            count=s.in_flight,
        )
        for s in found
        if applies_to(rule, s.environment)
    }


def register() -> None:
    register_condition(
        "webhook_silence",
        silence,
        label=_("Webhook silence"),
        description=_("No valid webhook event for the minutes given while objects are in flight."),
        thresholds=(Threshold("minutes", _("Silent for (minutes)"), 30, 1, 1440),),
    )
