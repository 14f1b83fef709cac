"""Reconciliation's background work (django-q2): thin calls into the services."""

from __future__ import annotations

from books.reconciliation.engine import run_continue
from books.reconciliation.schedules import runs_daily, runs_resume_due


def reconciliation_run_task(run_id: int) -> str:
    """Take a run's steps until it completes, pauses (budget, fault) or fails."""
    return str(run_continue(run_id).state)


def reconciliation_daily() -> int:
    """Schedule, daily: a run of every active environment."""
    return runs_daily()


def reconciliation_resume_due() -> int:
    """Schedule, every few minutes: paused runs whose pause is over resume from their cursor."""
    return runs_resume_due()
