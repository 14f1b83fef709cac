"""Kind `webhook_receiver`: an environment in use has no webhook receiver registered."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from alerts.conditions import Subjects, register_condition
from alerts.conditions._common import applies_to, environment_subject
from console.sentences import summary
from webhooks.services.gaps import receivers_missing

if TYPE_CHECKING:
    from alerts.models import AlertRule


def no_receiver(rule: AlertRule, now: datetime) -> Subjects:
    return {
        environment_subject(environment): summary(
            gettext_noop(
                "%(environment)s: no webhook receiver registered, so nothing pushes its events"
            ),
            environment=environment.name,
        )
        for environment in receivers_missing()
        if applies_to(rule, environment)
    }


def register() -> None:
    register_condition(
        "webhook_receiver",
        no_receiver,
        label=_("No webhook receiver registered"),
        description=_("An environment in use has no webhook receiver registered upstream."),
    )
