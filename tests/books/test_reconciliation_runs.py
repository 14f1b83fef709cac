"""Runs without the upstream: their schedules, one open run per scope, resuming when due, and the
live progress every step announces to the books' readers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from books.reconciliation.engine import run_start, run_step
from books.reconciliation.exception_actions import exception_comment, exception_set_state
from books.reconciliation.models import (
    ExceptionKind,
    ExceptionState,
    ReconciliationException,
    ReconciliationRun,
    RunPhase,
    RunState,
)
from books.reconciliation.schedules import runs_resume_due
from console.broadcast import role_group
from console.models import LiveMessage
from console.schedules import SCHEDULES
from gateway.models import Environment
from staff.errors import ServiceError
from staff.models import AuditEntry
from staff.roles import BOOKS_VIEW, ROLES
from tests.finance import make_environment, make_staff

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbox_layer")]

READERS = {role_group(role.key) for role in ROLES if BOOKS_VIEW in role.permissions}


@pytest.fixture
def environment() -> Environment:
    return make_environment()


def open_run(environment: Environment, **fields: object) -> ReconciliationRun:
    now = timezone.now()
    return ReconciliationRun.objects.create(
        environment=environment,
        window_start=now - timedelta(days=1),
        window_end=now,
        **fields,
    )


def test_the_daily_run_and_the_resume_are_scheduled() -> None:
    assert SCHEDULES["books.reconciliation_daily"].func == (
        "books.reconciliation.tasks.reconciliation_daily"
    )
    resume = SCHEDULES["books.reconciliation_resume"]
    assert resume.func == "books.reconciliation.tasks.reconciliation_resume_due"
    assert resume.minutes == 5


def test_one_open_run_per_scope_and_a_window_must_make_sense(environment: Environment) -> None:
    maker = make_staff("finance_maker")
    open_run(environment, state=RunState.PAUSED)
    with pytest.raises(ServiceError) as refused:
        run_start(environment=environment, by=maker)
    assert refused.value.code == "run_open" and refused.value.status == 409
    now = timezone.now()
    with pytest.raises(ServiceError) as backwards:
        run_start(environment=environment, by=maker, window_start=now, window_end=now)
    assert backwards.value.code == "invalid_window"
    assert ReconciliationRun.objects.count() == 1


def test_a_step_without_accounts_left_finishes_and_every_step_is_announced(
    environment: Environment,
) -> None:
    run = open_run(environment, phase=RunPhase.BALANCES, calls_spent=4)
    assert run_step(run_id=run.pk) is True  # no fiat account: on to done, no call spent
    assert run_step(run_id=run.pk) is False
    run.refresh_from_db()
    assert run.state == RunState.COMPLETED and run.calls_spent == 4
    assert run.finished_at is not None
    entry = AuditEntry.objects.get(action="books.reconciliation_completed")
    assert entry.details["calls_spent"] == 4
    sent = [(row.group, row.message) for row in LiveMessage.objects.order_by("id")]
    assert {group for group, _ in sent} == READERS
    last = sent[-1][1]
    assert last["kind"] == "books.reconciliation"
    assert last["payload"]["run_id"] == run.pk and last["payload"]["state"] == "completed"


def test_a_paused_run_resumes_only_once_its_pause_is_over(environment: Environment) -> None:
    later = open_run(
        environment,
        state=RunState.PAUSED,
        phase=RunPhase.DONE,
        resume_after=timezone.now() + timedelta(minutes=5),
    )
    due = open_run(
        environment,
        state=RunState.PAUSED,
        phase=RunPhase.DONE,
        resume_after=timezone.now() - timedelta(seconds=1),
        interruptions=1,
    )
    assert runs_resume_due() == 1
    due.refresh_from_db()
    later.refresh_from_db()
    assert due.state == RunState.COMPLETED and due.interruptions == 1
    assert later.state == RunState.PAUSED


def test_a_person_working_an_exception_is_announced_to_the_books_readers(
    environment: Environment,
) -> None:
    run = open_run(environment, state=RunState.COMPLETED)
    item = ReconciliationException.objects.create(
        environment=environment,
        kind=ExceptionKind.MISSING_UPSTREAM,
        key="po_announced",
        upstream_id="po_announced",
        summary="Missing upstream",
        first_seen_run=run,
        last_seen_run=run,
    )
    maker = make_staff("finance_maker")
    exception_set_state(item=item, state=ExceptionState.INVESTIGATING, by=maker)
    exception_comment(item=item, body="Looking at it", by=maker)
    sent = [
        (row.group, row.message)
        for row in LiveMessage.objects.order_by("id")
        if row.message["kind"] == "books.reconciliation.exception"
    ]
    assert {group for group, _ in sent} == READERS
    payloads = [message["payload"] for _, message in sent]
    assert {"exception_id": item.pk, "run_id": run.pk, "state": "investigating"} in payloads
    assert AuditEntry.objects.filter(action="books.exception_state_set").count() == 1
    assert AuditEntry.objects.filter(action="books.exception_commented").count() == 1
