"""The reconciliation schedules: the daily run of every active environment, and paused runs
whose pause is over (registered in books.apps)."""

from __future__ import annotations

import logging

from django.utils import timezone

from books.reconciliation.engine import run_continue, run_start
from books.reconciliation.models import ReconciliationRun, RunState
from gateway.models import Environment
from staff.errors import ServiceError

logger = logging.getLogger("books")


def runs_daily() -> int:
    """The daily run of every active environment (yesterday and today so far)."""
    started = 0
    for environment in Environment.objects.filter(is_active=True).exclude(base_url=""):
        try:
            run_start(environment=environment, by=None, trigger="schedule")
            started += 1
        except ServiceError as exc:
            logger.info("reconciliation of %s not started: %s", environment, exc.message)
    return started


def runs_resume_due() -> int:
    """Paused runs whose pause is over take their next steps."""
    due = list(
        ReconciliationRun.objects.filter(
            state=RunState.PAUSED, resume_after__lte=timezone.now()
        ).values_list("pk", flat=True)
    )
    for run_id in due:
        run_continue(run_id)
    return len(due)
