"""Tell open reconciliation pages what changed (after commit), so they update as it goes: a run's
progress, and an exception's change (a run found it, settled it, or a person acted on it).

Registered as the announcers of runs and exceptions (books.apps), so `staff.actions` queues them
with every audited change; the same message twice in one transaction is sent once."""

from __future__ import annotations

from books.reconciliation.models import ReconciliationException, ReconciliationRun
from console.broadcast import broadcast_event_on_commit, roles_holding
from staff.roles import BOOKS_VIEW

RUN_PROGRESS = "books.reconciliation"
EXCEPTION_CHANGED = "books.reconciliation.exception"
READER_ROLES = roles_holding(BOOKS_VIEW)


def run_progress(run: ReconciliationRun) -> None:
    """Queue a small "run N: state, phase, counts" message; nothing on a rollback."""
    payload = {
        "run_id": run.pk,
        "state": str(run.state),
        "phase": str(run.phase),
        "next_page": run.next_page,
        "total_pages": run.total_pages,
        "calls_spent": run.calls_spent,
        "payouts_checked": run.payouts_checked,
        "accounts_checked": run.accounts_checked,
        "findings": run.findings,
        "resolved": run.resolved,
    }
    broadcast_event_on_commit(RUN_PROGRESS, payload, roles=READER_ROLES)


def exception_changed(item: ReconciliationException) -> None:
    """Queue a small "exception N (last seen in run R) is now S" message; nothing on a rollback."""
    payload = {
        "exception_id": item.pk,
        "run_id": item.last_seen_run_id,
        "state": str(item.state),
    }
    broadcast_event_on_commit(EXCEPTION_CHANGED, payload, roles=READER_ROLES)
