"""The endpoint cache, the stored event as the work item, and its processors (ADR 0024)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_q.models import OrmQ

from staff import crypto
from tests.webhooks import handlers
from tests.webhooks.conftest import CURRENT, compact, hmac_hex, new_event
from tests.workers import ROOT, env_for_the_test_database, qcluster
from webhooks.contract import USER
from webhooks.models import EventStatus, ProcessingAttempt, WebhookEndpoint, WebhookEvent
from webhooks.services.processor import webhook_events_drain, webhook_processor_run
from webhooks.services.receiver_endpoint import endpoint_cache_clear
from webhooks.services.receiving import delivery_receive

ROTATED = "whsec_rotated-in-another-process"


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    endpoint_cache_clear()


@pytest.fixture
def recording_handler(monkeypatch) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """The user kind handled by the tests' recording service (the registry restored after)."""
    from webhooks import handlers as registry

    monkeypatch.setitem(registry._HANDLERS, USER, handlers.record_apply_event)
    handlers.CALLS.clear()
    return handlers.CALLS


def _receive(endpoint: WebhookEndpoint, payload: dict, secret: str = CURRENT) -> int:  # type: ignore[type-arg]
    body = compact(payload)
    return delivery_receive(
        receiver_id=str(endpoint.receiver_id),
        headers={"x-signature-sha256": hmac_hex(body, secret)},
        body=body,
        body_size=len(body),
        started=time.perf_counter(),
    ).status


def test_the_cached_endpoint_is_not_read_again_for_the_next_delivery(endpoint) -> None:
    assert _receive(endpoint, new_event(user_id="u-1")) == 200

    with CaptureQueriesContext(connection) as queries:
        assert _receive(endpoint, new_event(user_id="u-2")) == 200

    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    # Only the in-transaction check of the secrets, by primary key: no lookup by receiver path.
    assert len(reads) == 1 and "receiver_id" not in reads[0], reads


def test_a_secret_added_by_another_process_is_accepted_at_once(endpoint) -> None:
    assert _receive(endpoint, new_event(user_id="u-1")) == 200  # cached now
    # Another process stores a pending secret (a rotation under way): this process's cache is
    # not told; the row is all that changed.
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        pending_secret_encrypted=crypto.encrypt(ROTATED), pending_since=timezone.now()
    )

    assert _receive(endpoint, new_event(user_id="u-2"), secret=ROTATED) == 200


def test_a_secret_retired_by_another_process_is_refused_at_once(endpoint) -> None:
    assert _receive(endpoint, new_event(user_id="u-1")) == 200  # cached with CURRENT
    # Rotated twice elsewhere: CURRENT is neither current nor previous any more.
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        secret_encrypted=crypto.encrypt(ROTATED),
        previous_secret_encrypted=crypto.encrypt("whsec_other"),
        previous_valid_until=timezone.now() + timedelta(minutes=5),
    )
    refused = new_event(user_id="u-2")

    assert _receive(endpoint, refused) == 400
    assert not WebhookEvent.objects.filter(event_id=refused["data"]["event_id"]).exists()
    assert _receive(endpoint, new_event(user_id="u-3"), secret=ROTATED) == 200


def test_a_removed_endpoint_is_unknown_at_once(endpoint) -> None:
    assert _receive(endpoint, new_event(user_id="u-1")) == 200
    receiver_id = endpoint.receiver_id
    WebhookEndpoint.objects.filter(pk=endpoint.pk).delete()

    endpoint.receiver_id = receiver_id
    assert _receive(endpoint, new_event(user_id="u-2")) == 404


def test_a_duplicate_delivery_is_stored_once_and_writes_no_task(endpoint) -> None:
    payload = new_event(user_id="u-dup")

    assert [_receive(endpoint, payload) for _ in range(3)] == [200, 200, 200]

    event = WebhookEvent.objects.get(event_id=payload["data"]["event_id"])
    assert event.delivery_count == 3
    assert event.deliveries.filter(duplicate=False).count() == 1
    assert OrmQ.objects.count() == 0  # the event is the work item


@pytest.mark.django_db(transaction=True)
def test_the_processor_takes_pending_events_once_each(endpoint, recording_handler) -> None:
    payloads = [new_event("user.updated", user_id=f"u-{n}") for n in range(3)]
    for payload in payloads:
        assert _receive(endpoint, payload) == 200

    assert webhook_events_drain() == 3
    assert webhook_events_drain() == 0

    assert sorted(key for _, key in recording_handler) == sorted(
        p["data"]["event_id"] for p in payloads
    )
    assert set(WebhookEvent.objects.values_list("status", flat=True)) == {EventStatus.PROCESSED}


@pytest.mark.django_db(transaction=True)
def test_a_running_processor_is_woken_by_a_delivery(endpoint, recording_handler, settings) -> None:
    settings.WEBHOOKS_PROCESSOR_POLL_SECONDS = 30  # only a wake-up can make it look in time
    stop = threading.Event()
    thread = threading.Thread(target=webhook_processor_run, args=(stop,))
    thread.start()
    try:
        time.sleep(0.5)  # it has looked once and waits
        payload = new_event("user.updated", user_id="u-woken")
        assert _receive(endpoint, payload) == 200
        event = WebhookEvent.objects.get(event_id=payload["data"]["event_id"])
        deadline = time.monotonic() + 10
        while WebhookEvent.objects.get(pk=event.pk).status == EventStatus.PENDING:
            assert time.monotonic() < deadline, "the processor was not woken"
            time.sleep(0.05)
    finally:
        stop.set()
        from webhooks.services.processor import processors_wake

        processors_wake()
        thread.join(timeout=40)
    assert WebhookEvent.objects.get(pk=event.pk).status == EventStatus.PROCESSED


# A processor in another process claims the oldest pending event and dies inside its claim.
_CRASH = """
import os, django
django.setup()
from django.db import transaction
from webhooks.models import EventStatus, WebhookEvent
with transaction.atomic():
    event = (WebhookEvent.objects.select_for_update(skip_locked=True, of=("self",))
             .filter(status=EventStatus.PENDING).order_by("pk").first())
    WebhookEvent.objects.filter(pk=event.pk).update(attempts=99)  # work it never commits
    print("claimed", event.pk, flush=True)
    os._exit(3)  # killed mid-claim: no commit, no rollback, no clean-up
"""


@pytest.mark.django_db(transaction=True)
def test_a_processor_dying_mid_claim_loses_nothing(endpoint, recording_handler) -> None:
    payload = new_event("user.updated", user_id="u-crash")
    assert _receive(endpoint, payload) == 200
    event = WebhookEvent.objects.get(event_id=payload["data"]["event_id"])
    connection.close()  # the child must be able to take SQLite's write lock

    crashed = subprocess.run(
        [sys.executable, "-c", _CRASH],
        cwd=ROOT,
        env=env_for_the_test_database("crash"),
        capture_output=True,
        timeout=60,
    )

    assert crashed.returncode == 3, crashed.stderr.decode()[-2000:]
    assert f"claimed {event.pk}" in crashed.stdout.decode()
    event.refresh_from_db()
    assert (event.status, event.attempts) == (EventStatus.PENDING, 0)  # nothing of it kept
    assert webhook_events_drain() == 1  # picked up again
    event.refresh_from_db()
    assert event.status == EventStatus.PROCESSED
    assert recording_handler == [("user.updated", payload["data"]["event_id"])]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_processors_at_once_process_each_event_exactly_once(
    endpoint, recording_handler
) -> None:
    payloads = [new_event("user.updated", user_id=f"u-{n}") for n in range(40)]
    for payload in payloads:
        assert _receive(endpoint, payload) == 200
    barrier = threading.Barrier(2)
    taken: list[int] = []
    errors: list[BaseException] = []

    def processor() -> None:
        try:
            barrier.wait()
            taken.append(webhook_events_drain(limit=1000))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=processor) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert not errors, errors
    assert sum(taken) == 40
    assert all(share > 0 for share in taken), taken  # both worked: SKIP LOCKED, not a queue
    assert sorted(key for _, key in recording_handler) == sorted(
        p["data"]["event_id"] for p in payloads
    )
    assert ProcessingAttempt.objects.count() == 40
    assert set(WebhookEvent.objects.values_list("status", flat=True)) == {EventStatus.PROCESSED}


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_takes_a_delivered_event_at_once(endpoint, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The embedded default's path end to end: `manage.py qcluster` (as `make run` starts it)
    runs a processor thread that a delivery's commit wakes; its poll is ten minutes, so only the
    wake-up can explain an event taken within the minute (Redis list or the broker's sockets)."""
    import uuid

    from django_q.conf import Conf

    cluster = f"wh-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(Conf, "PREFIX", cluster)
    monkeypatch.setattr(Conf, "CLUSTER_NAME", cluster)
    env = {
        "WEBHOOKS_PROCESSOR_IN_WORKERS": "1",
        "WEBHOOKS_PROCESSOR_POLL_SECONDS": "600",
        "PAYOPS_Q_POLL": "600",
    }
    with qcluster(cluster, env=env) as worker:
        from django.conf import settings

        from console.task_broker import wake
        from webhooks.services.processor import WAKE_QUEUE

        deadline = time.monotonic() + 60
        # On the embedded default the processor listens on the broker's socket: wait until it
        # does (these early wake-ups find nothing). With Redis the wake-up waits in a list.
        while not settings.REDIS_URL and wake(WAKE_QUEUE) == 0:
            assert worker.poll() is None, "qcluster exited early"
            assert time.monotonic() < deadline, "the processor never listened"
            time.sleep(0.1)
        # A payment-link event: processed locally (the event is the record), no upstream call.
        payload = new_event("card_payment", user_id="u-worker")
        assert _receive(endpoint, payload) == 200

        event = WebhookEvent.objects.get(event_id=payload["data"]["event_id"])
        while event.status == EventStatus.PENDING:
            assert worker.poll() is None, "qcluster exited early"
            assert time.monotonic() < deadline, "the worker's processor never took the event"
            time.sleep(0.2)
            event.refresh_from_db()
        assert event.status == EventStatus.PROCESSED
        assert ProcessingAttempt.objects.filter(event=event).count() == 1


@pytest.mark.redis
def test_a_wait_on_redis_longer_than_five_seconds_is_not_a_failure(settings, caplog) -> None:  # type: ignore[no-untyped-def]
    """redis-py 8 gives every read a 5 s socket timeout unless told otherwise; the processor's
    blocking wait on its wake-up list may be longer, and an empty answer is not an error."""
    from webhooks.services import processor

    settings.WEBHOOKS_PROCESSOR_POLL_SECONDS = 6
    processor._redis_client = None  # built again with this poll
    processor._redis().delete(processor._REDIS_WAKE_KEY)  # no wake-up left by an earlier test
    waiter = processor._Waiter()
    try:
        with caplog.at_level("WARNING", logger=processor.__name__):
            started = time.monotonic()
            waiter.wait(6)
    finally:
        waiter.close()
        processor._redis_client = None
    assert not [r for r in caplog.records if "Redis wait failed" in r.getMessage()]
    assert time.monotonic() - started >= 5.5  # it waited on Redis the whole time, not on a fallback
