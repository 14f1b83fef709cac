"""Kind `payout_quiet`: a payout with no news past its state's expected time (payouts.tracking)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from alerts.conditions import Subjects, register_condition
from alerts.conditions._common import applies_to, payout_subject
from console.sentences import Label, summary
from payouts.tracking.health import quiet_payouts

if TYPE_CHECKING:
    from alerts.models import AlertRule


def quiet(rule: AlertRule, now: datetime) -> Subjects:
    return {
        payout_subject(q.payout.pk): summary(
            gettext_noop(
                "Payout %(id)s (%(status)s) has had no news for %(minutes)s min "
                "(expected within %(expected)s min)"
            ),
            id=q.payout.pk,
            status=Label("payout_status", q.payout.status),
            minutes=int(q.verdict.quiet_for.total_seconds() // 60),
            expected=int(q.verdict.expected.total_seconds() // 60),
        )
        for q in quiet_payouts(now=now)
        if applies_to(rule, q.payout.environment)
    }


def register() -> None:
    register_condition(
        "payout_quiet",
        quiet,
        label=_("Payout quiet past its expected time"),
        description=_(
            "A payout has had no news for longer than its state's expected time "
            "(each state has its own, shown on the payout's page)."
        ),
    )
