"""Kind `payout_failed`: a payout failed or returned (resolved when a person acknowledges it)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from alerts.conditions import Subjects, Threshold, register_condition, threshold_value
from alerts.conditions._common import payout_subject
from console.sentences import Label, summary
from payouts.models import Payout, PayoutStatus

if TYPE_CHECKING:
    from alerts.models import AlertRule


def failed_or_returned(rule: AlertRule, now: datetime) -> Subjects:
    hours = threshold_value(rule, "within_hours")
    payouts = Payout.objects.filter(
        status__in=(PayoutStatus.FAILED, PayoutStatus.RETURNED),
        updated_at__gte=now - timedelta(hours=hours),
        environment__is_active=True,
    )
    if rule.environment_id is not None:
        payouts = payouts.filter(environment_id=rule.environment_id)
    return {
        payout_subject(payout.pk): summary(
            gettext_noop("Payout %(id)s is %(status)s"),
            id=payout.pk,
            status=Label("payout_status", payout.status, lower=True),
        )
        for payout in payouts.only("pk", "status")
    }


def register() -> None:
    register_condition(
        "payout_failed",
        failed_or_returned,
        label=_("Payout failed or returned"),
        description=_(
            "A payout failed or was returned in the last hours given; the alert resolves when "
            "a person acknowledges it."
        ),
        thresholds=(Threshold("within_hours", _("Changed within (hours)"), 24, 1, 720),),
        resolved_by_acknowledgement=True,
    )
