"""Kind `sign_in_failures`: an account with repeated sign-in failures (staff.lockout's count)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from alerts.conditions import Subjects, Threshold, register_condition, threshold_value
from console.sentences import summary
from staff.lockout import failing_accounts

if TYPE_CHECKING:
    from alerts.models import AlertRule


def sign_in_failures(rule: AlertRule, now: datetime) -> Subjects:
    found = failing_accounts(at_least=threshold_value(rule, "failures"), now=now)
    return {
        f"account:{username}": summary(
            gettext_noop("%(account)s: %(count)s failed sign-ins"), account=username, count=failures
        )
        for username, failures in found.items()
    }


def register() -> None:
    register_condition(
        "sign_in_failures",
        sign_in_failures,
        label=_("Repeated sign-in failures"),
        description=_(
            "An account has at least the number given of failed sign-ins within the lockout's "
            "failure memory."
        ),
        thresholds=(Threshold("failures", _("Failures at least"), 5, 1, 1000),),
        per_environment=False,
    )
