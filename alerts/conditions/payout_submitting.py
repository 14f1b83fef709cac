"""Kind `payout_submitting`: a payout stuck in submitting past N minutes."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from alerts.conditions import Subjects, Threshold, register_condition, threshold_value
from alerts.conditions._common import payout_subject
from console.sentences import summary
from payouts.models import Payout, PayoutStatus

if TYPE_CHECKING:
    from alerts.models import AlertRule


def stuck_submitting(rule: AlertRule, now: datetime) -> Subjects:
    minutes = threshold_value(rule, "minutes")
    payouts = Payout.objects.filter(status=PayoutStatus.SUBMITTING, environment__is_active=True)
    if rule.environment_id is not None:
        payouts = payouts.filter(environment_id=rule.environment_id)
    rows = (
        payouts.annotate(since=Coalesce(F("submitting_since"), F("updated_at")))
        .filter(since__lt=now - timedelta(minutes=minutes))
        .values_list("pk", "since")
    )
    return {
        payout_subject(pk): summary(
            gettext_noop("Payout %(id)s has been submitting for %(minutes)s min"),
            id=pk,
            minutes=int((now - since).total_seconds() // 60),
        )
        for pk, since in rows
    }


def register() -> None:
    register_condition(
        "payout_submitting",
        stuck_submitting,
        label=_("Payout stuck in submitting"),
        description=_("A payout has been in submitting longer than the minutes given."),
        thresholds=(Threshold("minutes", _("Minutes in submitting"), 10, 1, 1440),),
    )
