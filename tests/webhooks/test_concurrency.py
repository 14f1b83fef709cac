"""Two deliveries of one event at the same instant store one event (SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from tests.webhooks.conftest import CURRENT, compact, hmac_hex, new_event
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services.receiving import delivery_receive


def _race(endpoint, copies: int = 2) -> list[int]:
    payload = new_event("user.created", user_id="u-race")
    body = compact(payload)
    headers = {"x-signature-sha256": hmac_hex(body, CURRENT)}
    barrier = threading.Barrier(copies)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def send() -> None:
        try:
            barrier.wait()
            answer = delivery_receive(
                receiver_id=str(endpoint.receiver_id),
                headers=headers,
                body=body,
                body_size=len(body),
                started=time.perf_counter(),
            )
            statuses.append(answer.status)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(copies)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors, errors
    return statuses


@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicates_from_two_threads_store_one_event(endpoint) -> None:
    statuses = _race(endpoint)

    assert statuses == [200, 200]
    assert WebhookEvent.objects.count() == 1
    assert WebhookDelivery.objects.count() == 2
    assert WebhookEvent.objects.get().delivery_count == 2
    assert sorted(WebhookDelivery.objects.values_list("duplicate", flat=True)) == [False, True]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicates_on_postgresql_store_one_event(endpoint) -> None:
    statuses = _race(endpoint, copies=6)

    assert statuses == [200] * 6
    assert WebhookEvent.objects.count() == 1
    assert WebhookDelivery.objects.count() == 6
    assert WebhookDelivery.objects.filter(duplicate=False).count() == 1
