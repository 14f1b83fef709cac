"""Kind `approvals_waiting`: a payout waiting for approval past the SLA's minutes."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from alerts.conditions import Subjects, Threshold, register_condition, threshold_value
from alerts.conditions._common import payout_subject
from console.sentences import summary
from payouts.models import Payout, PayoutStatus

if TYPE_CHECKING:
    from alerts.models import AlertRule


def waiting(rule: AlertRule, now: datetime) -> Subjects:
    minutes = threshold_value(rule, "minutes")
    # The approvals inbox's "anyone" scope: every payout pending approval (payouts.approval).
    payouts = Payout.objects.filter(
        status=PayoutStatus.PENDING_APPROVAL,
        submitted_at__lt=now - timedelta(minutes=minutes),
        environment__is_active=True,
    )
    if rule.environment_id is not None:
        payouts = payouts.filter(environment_id=rule.environment_id)
    return {
        payout_subject(pk): summary(
            gettext_noop("Payout %(id)s has waited for approval for %(minutes)s min"),
            id=pk,
            minutes=int((now - (at or now)).total_seconds() // 60),
        )
        for pk, at in payouts.values_list("pk", "submitted_at")
    }


def register() -> None:
    register_condition(
        "approvals_waiting",
        waiting,
        label=_("Approval waiting past its SLA"),
        description=_("A payout has waited for approval longer than the minutes given."),
        thresholds=(Threshold("minutes", _("SLA (minutes)"), 60, 1, 10080),),
    )
