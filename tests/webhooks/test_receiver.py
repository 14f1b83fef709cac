"""The receiver: every bad input is a 4xx (stored for diagnosis), events stored once, fast ack."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client, override_settings

from tests.webhooks.conftest import CURRENT, compact, hmac_hex, new_event
from webhooks.models import (
    EventStatus,
    SignatureVerdict,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventLink,
)

pytestmark = pytest.mark.django_db


def test_a_valid_event_is_stored_with_its_delivery_and_links(post_signed) -> None:
    user_id = str(uuid.uuid4())
    payload = new_event("user.created", user_id=user_id, status="unverified")

    response = post_signed(payload, headers={"Authorization": "Bearer leak", "X-Api-Key": "k"})

    assert response.status_code == 200
    event = WebhookEvent.objects.get()
    assert event.event_id == payload["data"]["event_id"]
    assert event.status == EventStatus.PENDING
    delivery = WebhookDelivery.objects.get()
    assert delivery.event == event and delivery.verdict == SignatureVerdict.VALID
    assert bytes(delivery.body) == compact(payload)
    assert delivery.matched_secret == "current"
    assert "authorization" not in delivery.headers and "x-api-key" not in delivery.headers
    assert delivery.headers["x-signature-sha256"]
    assert WebhookEventLink.objects.get().upstream_id == user_id


def test_a_duplicate_is_acknowledged_and_stores_no_second_event(post_signed) -> None:
    payload = new_event("user.created", user_id=str(uuid.uuid4()))

    first, second = post_signed(payload), post_signed(payload)

    assert (first.status_code, second.status_code) == (200, 200)
    assert second.json()["reason"] == "duplicate"
    event = WebhookEvent.objects.get()
    assert event.delivery_count == 2
    assert [d.duplicate for d in WebhookDelivery.objects.order_by("id")] == [False, True]


def test_unknown_event_types_are_stored_unhandled_and_acknowledged(post_signed) -> None:
    response = post_signed(new_event("settlement.completed", settlement_id="s1"))

    assert response.status_code == 200
    event = WebhookEvent.objects.get()
    assert event.status == EventStatus.UNHANDLED
    assert event.has_drift and event.drift[0]["kind"] == "unknown_event_type"


def test_unexpected_fields_and_unknown_status_values_are_flagged(post_signed) -> None:
    post_signed(new_event("user.created", user_id="u1", status="suspended", eligible_products=[]))

    drift = WebhookEvent.objects.get().drift
    assert {"kind": "unexpected_field", "detail": "eligible_products"} in drift
    assert {"kind": "unknown_status", "detail": "status=suspended"} in drift


def test_nested_payout_status_changed_is_checked_against_payout_states(post_signed) -> None:
    payload = new_event(
        "payout.status_changed",
        event_type="payout.status_changed",
        created_at="2026-11-21T10:15:30.123Z",
        data={"payout_id": "p1", "status": "PROCESSING", "previous_status": "pending"},
    )
    post_signed(payload)

    event = WebhookEvent.objects.get()
    assert event.drift == []
    assert WebhookEventLink.objects.get().upstream_id == "p1"


BAD_INPUTS = [
    ("missing signature", lambda: (compact(new_event()), ""), SignatureVerdict.MISSING),
    ("wrong secret", lambda: (compact(new_event()), "a" * 64), SignatureVerdict.INVALID),
    ("not hex", lambda: (compact(new_event()), "not-a-signature"), SignatureVerdict.INVALID),
    ("malformed json", lambda: (b'{"event": ', None), SignatureVerdict.MALFORMED),
    ("not utf-8", lambda: (b"\xff\xfe\x00", None), SignatureVerdict.MALFORMED),
    ("array", lambda: (b"[1,2]", None), SignatureVerdict.MALFORMED),
    ("string", lambda: (b'"hello"', None), SignatureVerdict.MALFORMED),
    ("no event", lambda: (b'{"data":{"event_id":"evt_1"}}', None), SignatureVerdict.MALFORMED),
    ("data not object", lambda: (b'{"event":"x","data":[]}', None), SignatureVerdict.MALFORMED),
    ("no event_id", lambda: (b'{"event":"x","data":{}}', None), SignatureVerdict.MALFORMED),
    (
        "event_id number",
        lambda: (b'{"event":"x","data":{"event_id":5}}', None),
        SignatureVerdict.MALFORMED,
    ),
    ("empty body", lambda: (b"", None), SignatureVerdict.MALFORMED),
]


@pytest.mark.parametrize(("name", "make", "verdict"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_a_400_and_the_delivery_is_kept(post_signed, name, make, verdict) -> None:
    body, signature = make()

    response = post_signed(body, signature=signature)

    assert response.status_code == 400, response.content
    assert response.json()["status"] == "rejected" and response.json()["reason"]
    delivery = WebhookDelivery.objects.get()
    assert delivery.verdict == verdict
    assert delivery.event is None
    assert WebhookEvent.objects.count() == 0


@override_settings(WEBHOOKS_MAX_BODY_BYTES=1024)
def test_a_body_past_the_size_limit_is_413(post_signed) -> None:
    payload = new_event(padding="x" * 2000)

    response = post_signed(payload)

    assert response.status_code == 413
    assert WebhookDelivery.objects.get().verdict == SignatureVerdict.TOO_LARGE
    assert WebhookEvent.objects.count() == 0


def test_a_body_past_djangos_own_upload_limit_is_413_not_500(post_signed, settings) -> None:
    settings.WEBHOOKS_MAX_BODY_BYTES = 10 * 1024 * 1024
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000

    response = post_signed(new_event(padding="x" * 5000))

    assert response.status_code == 413


def test_an_unknown_receiver_path_is_404_and_get_is_405(client: Client, endpoint) -> None:
    assert (
        client.post(
            f"/webhooks/in/{uuid.uuid4()}/", data=b"{}", content_type="application/json"
        ).status_code
        == 404
    )
    assert client.get(f"/webhooks/in/{endpoint.receiver_id}/").status_code == 405


def test_an_endpoint_without_a_secret_refuses_everything(client: Client, environment) -> None:
    endpoint = WebhookEndpoint.objects.create(environment=environment)
    body = compact(new_event())

    response = client.post(
        f"/webhooks/in/{endpoint.receiver_id}/",
        data=body,
        content_type="application/json",
        headers={"x-signature-sha256": hmac_hex(body, CURRENT)},
    )

    assert response.status_code == 400
    assert WebhookDelivery.objects.get().verdict == SignatureVerdict.NO_SECRET


@override_settings(WEBHOOKS_INVALID_DELIVERIES_PER_HOUR=3, WEBHOOKS_INVALID_BODY_LIMIT=10)
def test_refused_deliveries_are_capped_and_counted(post_signed, endpoint) -> None:
    for _ in range(5):
        assert post_signed(new_event(), signature="b" * 64).status_code == 400

    assert WebhookDelivery.objects.count() == 3
    assert all(len(bytes(d.body)) == 10 and d.body_truncated for d in WebhookDelivery.objects.all())
    endpoint.refresh_from_db()
    assert endpoint.invalid_not_stored == 2


def test_the_receiver_never_answers_5xx_for_odd_content_types(client: Client, endpoint) -> None:
    body = compact(new_event())
    response = client.post(
        f"/webhooks/in/{endpoint.receiver_id}/",
        data=body,
        content_type="text/plain; charset=latin-1",
        headers={"x-signature-sha256": hmac_hex(body, CURRENT)},
    )

    assert response.status_code == 200
    assert json.loads(bytes(WebhookDelivery.objects.get().body)) == json.loads(body)


STORAGE_HOSTILE = [
    ("NaN", b'{"event":"user.created","data":{"event_id":"evt_nan","n":NaN}}'),
    ("Infinity", b'{"event":"user.created","data":{"event_id":"evt_inf","n":-Infinity}}'),
    ("huge number", b'{"event":"user.created","data":{"event_id":"evt_big","n":1e400}}'),
    ("NUL in a value", b'{"event":"user.created","data":{"event_id":"evt_\\u0000"}}'),
    ("NUL in a key", b'{"event":"user.created","data":{"event_id":"e","\\u0000":1}}'),
    ("lone surrogate", b'{"event":"user.created","data":{"event_id":"evt_\\ud800"}}'),
    (
        "deep nesting",
        b'{"event":"x","data":{"event_id":"e","d":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
    ),
]


@pytest.mark.parametrize(("name", "body"), STORAGE_HOSTILE, ids=[b[0] for b in STORAGE_HOSTILE])
def test_bodies_the_database_cannot_store_are_a_400_signed_or_not(post_signed, name, body) -> None:
    signed = post_signed(body)
    unsigned = post_signed(body, signature="e" * 64)

    assert signed.status_code == 400, signed.content
    assert unsigned.status_code == 400, unsigned.content
    assert WebhookEvent.objects.count() == 0


def test_a_redelivery_with_another_body_is_flagged_not_applied(post_signed) -> None:
    payload = new_event("user.created", user_id="u-1", status="unverified")
    post_signed(payload)
    changed = {"event": payload["event"], "data": {**payload["data"], "status": "verified"}}

    response = post_signed(changed)

    assert response.status_code == 200 and response.json()["reason"] == "duplicate"
    event = WebhookEvent.objects.get()
    assert event.payload == payload
    assert {"kind": "duplicate_differs", "detail": "a redelivery had another body"} in event.drift
    assert bytes(WebhookDelivery.objects.order_by("id").last().body) == compact(changed)


def test_a_new_event_costs_one_insert_per_table_and_no_lookup(post_signed) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    payload = new_event("user.created", user_id=str(uuid.uuid4()), status="unverified")

    with CaptureQueriesContext(connection) as queries:
        assert post_signed(payload).status_code == 200

    statements = [query["sql"] for query in queries.captured_queries]
    assert not [sql for sql in statements if "gateway_environment" in sql], statements
    for table in ("webhookevent", "webhookdelivery", "webhookeventlink"):
        touching = [sql for sql in statements if f'"webhooks_{table}"' in sql]
        assert len(touching) == 1 and "INSERT" in touching[0], touching
    # One transaction (a savepoint inside the test's own transaction), none around the insert.
    assert len([sql for sql in statements if sql.startswith("SAVEPOINT")]) == 1, statements


def test_a_duplicate_rolls_back_the_new_event_attempt_and_queues_nothing(post_signed) -> None:
    from django_q.models import OrmQ

    payload = new_event("user.created", user_id=str(uuid.uuid4()))

    assert post_signed(payload).status_code == 200
    assert post_signed(payload).json()["reason"] == "duplicate"

    assert WebhookEvent.objects.count() == 1
    assert WebhookEventLink.objects.count() == 1
    # The stored event is the work item (ADR 0024): no task row for it, nor for its twin.
    assert OrmQ.objects.count() == 0


def test_a_secret_rotated_elsewhere_is_used_on_the_next_delivery(post_signed, endpoint) -> None:
    from staff import crypto

    assert post_signed(new_event("user.created", user_id="u1")).status_code == 200  # cache warm
    # Another process rotates: only the stored ciphertext changes under this process.
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        secret_encrypted=crypto.encrypt("whsec_rotated-elsewhere"),
        previous_secret_encrypted="",
        previous_valid_until=None,
    )

    fresh = post_signed(new_event("user.created", user_id="u2"), secret="whsec_rotated-elsewhere")
    stale = post_signed(new_event("user.created", user_id="u3"), secret=CURRENT)

    assert fresh.status_code == 200
    assert stale.status_code == 400
