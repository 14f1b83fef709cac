"""Kind `reconciliation_open`: reconciliation exceptions open (books.reconciliation)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.db.models import Count
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from alerts.conditions import Subjects, Threshold, register_condition, threshold_value
from books.reconciliation.models import ExceptionState, ReconciliationException
from console.sentences import summary

if TYPE_CHECKING:
    from alerts.models import AlertRule


def exceptions_open(rule: AlertRule, now: datetime) -> Subjects:
    at_least = threshold_value(rule, "count")
    # The queue's "unresolved" (open or investigating), by environment, in one query.
    items = ReconciliationException.objects.exclude(state=ExceptionState.RESOLVED).filter(
        environment__is_active=True
    )
    if rule.environment_id is not None:
        items = items.filter(environment_id=rule.environment_id)
    rows = items.values("environment_id", "environment__name").annotate(n=Count("id")).order_by()
    return {
        f"environment:{row['environment_id']}": summary(
            gettext_noop("%(environment)s: %(count)s reconciliation exceptions open"),
            environment=row["environment__name"],
            count=row["n"],
        )
        for row in rows
        if row["n"] >= at_least
    }


def register() -> None:
    register_condition(
        "reconciliation_open",
        exceptions_open,
        label=_("Reconciliation exceptions open"),
        description=_("At least the number given of reconciliation exceptions are unresolved."),
        thresholds=(Threshold("count", _("Open exceptions at least"), 1, 1, 100000),),
    )
