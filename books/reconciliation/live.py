"""Tell open run pages how a run is getting on (after commit), so they update as it goes."""

from __future__ import annotations

from books.reconciliation.models import ReconciliationRun
from console.broadcast import broadcast_event_on_commit, roles_holding
from staff.roles import BOOKS_VIEW

RUN_PROGRESS = "books.reconciliation"
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
