"""Processing: dispatch by contract, no-handler-yet kept, retries with backoff, reprocessing."""

from __future__ import annotations

import uuid
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from tests.webhooks import handlers
from tests.webhooks.conftest import new_event
from webhooks import contract
from webhooks import handlers as event_handlers
from webhooks.models import EventStatus, ProcessingAttempt, ReprocessRun, WebhookEvent
from webhooks.services import (
    webhook_event_process,
    webhook_events_retry_due,
    webhook_reprocess_run,
    webhook_reprocess_start,
)
from webhooks.services.processing import retry_delay

pytestmark = pytest.mark.django_db


@pytest.fixture
def test_handlers(monkeypatch):
    """Route the directory's and payouts' event types to a real test apply service."""
    handlers.CALLS.clear()
    handlers.FAIL_TIMES.clear()
    for kind in (contract.USER, contract.VIRTUAL_ACCOUNT, contract.PAYOUT):
        monkeypatch.setitem(event_handlers._HANDLERS, kind, handlers.record_apply_event)
    return handlers


def _receive(post_signed, django_capture_on_commit_callbacks, payload):
    with django_capture_on_commit_callbacks(execute=True):
        response = post_signed(payload)
    assert response.status_code == 200
    return WebhookEvent.objects.get(event_id=payload["data"]["event_id"])


def test_a_received_event_is_applied_after_commit_and_linked(
    post_signed, django_capture_on_commit_callbacks, sync_tasks, test_handlers
) -> None:
    payload = new_event("user.created", user_id=str(uuid.uuid4()))

    event = _receive(post_signed, django_capture_on_commit_callbacks, payload)

    event.refresh_from_db()
    assert event.status == EventStatus.PROCESSED
    assert [("user.created", payload["data"]["event_id"])] == test_handlers.CALLS
    link = event.links.get()
    assert link.touched and link.content_type.model == "auditentry"
    assert ProcessingAttempt.objects.get(event=event).outcome == "processed"


def test_an_event_whose_app_has_no_service_yet_is_kept_and_retried(
    post_signed, django_capture_on_commit_callbacks, sync_tasks, monkeypatch
) -> None:
    # No app has registered payout events (yet).
    monkeypatch.delitem(event_handlers._HANDLERS, contract.PAYOUT)
    payload = new_event("payout.created", payout_id="p1", status="CREATED")

    event = _receive(post_signed, django_capture_on_commit_callbacks, payload)
    event.refresh_from_db()
    assert event.status == EventStatus.NO_HANDLER
    assert event.next_attempt_at is not None and event.attempts == 0

    # The service lands later: the retry schedule applies the kept event.
    handlers.CALLS.clear()
    monkeypatch.setitem(event_handlers._HANDLERS, contract.PAYOUT, handlers.record_apply_event)
    webhook_events_retry_due(now=event.next_attempt_at + timedelta(seconds=1))

    event.refresh_from_db()
    assert event.status == EventStatus.PROCESSED
    assert [("payout.created", payload["data"]["event_id"])] == handlers.CALLS


def test_failures_are_recorded_and_retried_with_backoff(
    post_signed, django_capture_on_commit_callbacks, sync_tasks, test_handlers, settings
) -> None:
    settings.WEBHOOKS_RETRY_BASE_SECONDS = 10
    payload = new_event("virtual_account.created", virtual_account_id="va1", user_id="u1")
    test_handlers.FAIL_TIMES[payload["data"]["event_id"]] = 2

    event = _receive(post_signed, django_capture_on_commit_callbacks, payload)
    event.refresh_from_db()
    assert event.status == EventStatus.FAILED and event.attempts == 1
    assert "upstream object not found yet" in event.last_error
    first_due = event.next_attempt_at

    assert webhook_events_retry_due(now=first_due - timedelta(seconds=1)) == 0
    webhook_events_retry_due(now=first_due)
    event.refresh_from_db()
    assert event.attempts == 2 and event.status == EventStatus.FAILED
    assert retry_delay(2) == timedelta(seconds=20)

    webhook_events_retry_due(now=event.next_attempt_at)
    event.refresh_from_db()
    assert event.status == EventStatus.PROCESSED and event.attempts == 3
    assert [a.outcome for a in event.attempt_log.all()] == ["failed", "failed", "processed"]


def test_retries_stop_after_the_maximum_and_a_person_reprocesses(
    post_signed, django_capture_on_commit_callbacks, sync_tasks, test_handlers, settings, demo_staff
) -> None:
    settings.WEBHOOKS_PROCESS_MAX_ATTEMPTS = 1
    payload = new_event("user.updated", user_id="u1")
    test_handlers.FAIL_TIMES[payload["data"]["event_id"]] = 1

    event = _receive(post_signed, django_capture_on_commit_callbacks, payload)
    event.refresh_from_db()
    assert event.status == EventStatus.FAILED and event.next_attempt_at is None

    with django_capture_on_commit_callbacks(execute=True):
        run = webhook_reprocess_start(
            events=WebhookEvent.objects.filter(status=EventStatus.FAILED),
            by=demo_staff["admin"],
            description="all failed",
        )
    run.refresh_from_db()
    assert (run.total, run.done, run.failed) == (1, 1, 0) and run.finished_at
    event.refresh_from_db()
    assert event.status == EventStatus.PROCESSED


def test_reprocess_is_refused_to_staff_without_the_permission(demo_staff, environment) -> None:
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        webhook_reprocess_start(
            events=WebhookEvent.objects.all(), by=demo_staff["finance_maker"], description="x"
        )


def test_a_processed_event_is_not_applied_twice_by_a_late_retry(
    post_signed, django_capture_on_commit_callbacks, sync_tasks, test_handlers
) -> None:
    payload = new_event("user.created", user_id="u1")
    event = _receive(post_signed, django_capture_on_commit_callbacks, payload)

    webhook_event_process(event_pk=event.pk, trigger="retry")
    webhook_event_process(event_pk=event.pk, trigger="receipt")

    assert len(test_handlers.CALLS) == 1


def test_out_of_order_pairs_are_each_applied_once(
    post_signed, django_capture_on_commit_callbacks, sync_tasks, test_handlers
) -> None:
    user_id = str(uuid.uuid4())
    created = new_event("user.created", user_id=user_id, status="unverified")
    accepted = new_event(
        "user.verification.accepted", user_id=user_id, verification_status="verified"
    )
    # Later event first, then the earlier one, then both again (the upstream retries).
    for payload in (accepted, created, accepted, created):
        with django_capture_on_commit_callbacks(execute=True):
            assert post_signed(payload).status_code == 200

    assert sorted(test_handlers.CALLS) == sorted(
        [
            ("user.verification.accepted", accepted["data"]["event_id"]),
            ("user.created", created["data"]["event_id"]),
        ]
    )
    assert WebhookEvent.objects.filter(status=EventStatus.PROCESSED).count() == 2


def test_stale_pending_events_are_picked_up(environment, test_handlers) -> None:
    event = WebhookEvent.objects.create(
        environment=environment,
        event_id="evt_stale",
        event_type="user.created",
        payload=new_event("user.created", user_id="u1"),
        received_at=timezone.now() - timedelta(minutes=5),
    )

    assert webhook_events_retry_due() == 1
    event.refresh_from_db()
    assert event.status == EventStatus.PROCESSED


def test_payment_link_events_are_processed_and_linked_by_upstream_ids(
    post_signed, django_capture_on_commit_callbacks, sync_tasks
) -> None:
    payload = new_event(
        "barcode_generated",
        user_id="u-1",
        recipient_id="r-1",
        payment_link_id="pl-1",
        cash_request_id="cr-1",
        cash_request_status="DEPOSITED",
        metadata={"quote_id": "q-1", "quote_amount": "10", "fixed_fee": "1", "rate": "1"},
    )

    event = _receive(post_signed, django_capture_on_commit_callbacks, payload)

    event.refresh_from_db()
    assert event.status == EventStatus.PROCESSED
    kinds = dict(event.links.values_list("kind", "upstream_id"))
    assert kinds == {
        "user": "u-1",
        "recipient": "r-1",
        "payment_link": "pl-1",
        "cash_request": "cr-1",
        "quote": "q-1",
    }


def test_reprocess_command_reruns_failed_events_with_progress(
    environment, test_handlers, settings
) -> None:
    event = WebhookEvent.objects.create(
        environment=environment,
        event_id="evt_cmd",
        event_type="payout.failed",
        payload=new_event("payout.failed", payout_id="p1"),
        status=EventStatus.FAILED,
        attempts=8,
    )
    out = StringIO()

    call_command("webhooks", "reprocess", "--failed", stdout=out)

    assert "[1/1]" in out.getvalue() and "0 still failing" in out.getvalue()
    event.refresh_from_db()
    assert event.status == EventStatus.PROCESSED


def test_a_reprocess_run_resumes_where_it_stopped(environment, test_handlers) -> None:
    events = [
        WebhookEvent.objects.create(
            environment=environment,
            event_id=f"evt_{n}",
            event_type="user.created",
            payload=new_event("user.created", user_id=f"u{n}"),
            status=EventStatus.FAILED,
        )
        for n in range(3)
    ]
    run = ReprocessRun.objects.create(
        description="t", event_ids=[e.pk for e in events], total=3, done=1
    )

    webhook_reprocess_run(run_pk=run.pk)

    run.refresh_from_db()
    assert run.done == 3 and run.finished_at is not None
    assert len(test_handlers.CALLS) == 2
