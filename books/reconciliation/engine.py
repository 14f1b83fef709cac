"""
Reconciliation runs and the exceptions queue: every write (docs/books.md "Reconciliation").

A run compares one environment (or one virtual account) with the upstream, one step at a time:
a page of `GET /v1/payouts` for the window, a look-up of our payouts the list did not show, one
account's balance. Every step's upstream calls go through the gateway in background priority and
are counted on the run; what a step found is committed with the cursor's advance in one
transaction, so a budget refusal or a fault between steps pauses the run where it stopped and a
later step resumes it without counting anything twice. Findings are kept as exceptions, one
unresolved item per (environment, kind, what it concerns): a later run that finds the same
mismatch updates it, one that finds the two sides agree resolves it itself.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext
from django_q.tasks import async_task

from accounts.models import VirtualAccount
from books.reconciliation.access import require
from books.reconciliation.models import ReconciliationRun, RunPhase, RunState
from books.reconciliation.phases import RUN_FIELDS, STEPS, Calls, locked_run
from gateway.errors import PermanentError, UpstreamError
from gateway.models import Environment
from staff import roles
from staff.actions import act
from staff.errors import ServiceError
from staff.models import StaffUser

RESUME_DELAY = timedelta(minutes=2)


def run_start(
    *,
    environment: Environment,
    by: StaffUser | None,
    virtual_account: VirtualAccount | None = None,
    window_start: datetime | None = None,
    window_end: datetime | None = None,
    trigger: str = "manual",
) -> ReconciliationRun:
    """Open a run and queue its steps after commit. One open run per scope at a time."""
    require(by, roles.RECONCILE)
    now = timezone.now()
    end = window_end or now
    start = window_start or (end - timedelta(days=1)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    if start >= end:
        raise ServiceError(
            gettext("The window must start before it ends."),
            code="invalid_window",
            errors=[("window_start", gettext("must be before window_end"))],
        )
    if virtual_account is not None and virtual_account.environment_id != environment.pk:
        raise ServiceError(
            gettext("The virtual account is in another environment."),
            code="invalid_account",
            errors=[("virtual_account_id", gettext("is not in this environment"))],
        )
    with act(actor=by, action="books.reconciliation_started", fields=RUN_FIELDS) as started:
        busy = ReconciliationRun.objects.select_for_update().filter(
            environment=environment,
            virtual_account=virtual_account,
            state__in=(RunState.RUNNING, RunState.PAUSED),
        )
        if busy.exists():
            raise ServiceError(
                gettext("A run of this scope is still open: it resumes on its own."),
                code="run_open",
                status=409,
            )
        run = started.target = ReconciliationRun.objects.create(
            environment=environment,
            virtual_account=virtual_account,
            window_start=start,
            window_end=end,
            started_by=by,
            trigger=trigger,
        )
        transaction.on_commit(lambda: queue_run(run.pk))
    return run


def queue_run(run_id: int) -> None:
    from books.reconciliation.tasks import reconciliation_run_task

    async_task(reconciliation_run_task, run_id)


def run_continue(run_id: int, *, max_steps: int = 10_000) -> ReconciliationRun:
    """Take steps until the run completes, pauses or fails."""
    for _ in range(max_steps):
        if not run_step(run_id=run_id):
            break
    return ReconciliationRun.objects.get(pk=run_id)


def run_step(*, run_id: int) -> bool:
    """One step of a running (or due paused) run; True while there is more to do."""
    run = ReconciliationRun.objects.select_related("environment", "virtual_account").get(pk=run_id)
    if run.state == RunState.PAUSED:
        with transaction.atomic():
            run = locked_run(run_id)
            if run.state != RunState.PAUSED:
                return run.state == RunState.RUNNING
            run.state = RunState.RUNNING
            run.paused_reason = ""
            run.resume_after = None
            run.save(update_fields=["state", "paused_reason", "resume_after"])
    elif run.state != RunState.RUNNING:
        return False
    step = STEPS[RunPhase(run.phase)]
    counter = Calls()
    try:
        step(run, counter)
    except UpstreamError as exc:
        if isinstance(exc, PermanentError):
            _fail(run, counter, str(exc))
            return False
        _pause(run, counter, exc)
        return False
    return ReconciliationRun.objects.filter(pk=run_id, state=RunState.RUNNING).exists()


def _pause(run: ReconciliationRun, counter: Calls, exc: Exception) -> None:
    retry_after = getattr(exc, "retry_after", None)
    delay = max(RESUME_DELAY, timedelta(seconds=float(retry_after or 0)))
    with act(
        actor=None, action="books.reconciliation_paused", target=run, fields=RUN_FIELDS
    ) as paused:
        run = paused.target
        run.calls_spent += counter.made
        run.state = RunState.PAUSED
        run.interruptions += 1
        run.paused_reason = f"{type(exc).__name__}: {exc}"[:300]
        run.resume_after = timezone.now() + delay
        run.save()


def _fail(run: ReconciliationRun, counter: Calls, reason: str) -> None:
    with act(
        actor=None, action="books.reconciliation_failed", target=run, fields=RUN_FIELDS
    ) as failed:
        run = failed.target
        run.calls_spent += counter.made
        run.state = RunState.FAILED
        run.paused_reason = reason[:300]
        run.finished_at = timezone.now()
        run.save()
