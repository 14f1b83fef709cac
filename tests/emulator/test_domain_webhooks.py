"""Webhooks: registration, signed delivery to a real receiver, retries, rotation, drops, the log."""

import hashlib
import hmac
import json

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "whsec-first"


def verify(raw: bytes, signature: str, secret: str) -> bool:
    """An independent receiver-side check: HMAC-SHA256 hex over the raw request bytes."""
    expected = hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def register(sandbox, api_client, url, secret=SECRET):
    response = sandbox.post(
        "/webhooks/register",
        {"webhook_url": url, "secret": secret, "client_uuid": api_client.client_id},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"message": "Webhook registered successfully"}


def queue(control, api_client, event="card_payment", **data):
    response = control.post(
        "/_control/events", json={"client_id": api_client.client_id, "event": event, "data": data}
    )
    assert response.status_code == 201, response.text
    return response.json()


def deliveries(control, **params):
    return control.get("/_control/webhooks/deliveries", params=params).json()["deliveries"]


def test_events_arrive_signed_and_stringified_like_javascript(
    sandbox, control, receiver, api_client
):
    register(sandbox, api_client, receiver.url)
    queued = queue(
        control,
        api_client,
        reference="Pedido São Paulo ✓",
        status="completed",
        amount=12.0,
        nested={"b": 1, "a": [1.5, "x"]},
    )
    assert queued["queued"] is True and queued["event_id"].startswith("evt_")
    assert control.post("/_control/webhooks/flush").json() == {"attempted": 1}
    [request] = receiver.requests
    raw = request["body"]
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert verify(raw, headers["x-signature-sha256"], SECRET)
    assert headers["x-signature-sha256"] == headers["x-signature-sha256"].lower()
    assert not verify(raw, headers["x-signature-sha256"], "another-secret")
    parsed = json.loads(raw)
    # JSON.stringify: no spaces, non-ASCII as is, key order kept, 12.0 written as 12.
    assert raw == json.dumps(parsed, separators=(",", ":"), ensure_ascii=False).encode()
    assert "São Paulo ✓".encode() in raw and b'"amount":12,' in raw
    assert list(parsed) == ["event", "data"]
    assert list(parsed["data"]) == ["event_id", "reference", "status", "amount", "nested"]
    assert list(parsed["data"]["nested"]) == ["b", "a"]
    assert parsed["data"]["event_id"] == queued["event_id"]
    [entry] = deliveries(control)
    assert entry["status_code"] == 200 and entry["outcome"] == "delivered"
    assert entry["attempt"] == 1 and entry["secret"] == "current"
    assert entry["url"] == receiver.url
    assert SECRET not in json.dumps(entry)
    assert entry["secret_fingerprint"] == hashlib.sha256(SECRET.encode()).hexdigest()[:12]


def test_api_events_reach_the_receiver(sandbox, control, receiver, api_client):
    register(sandbox, api_client, receiver.url)
    user = sandbox.create_user()
    control.post("/_control/webhooks/flush")
    bodies = [json.loads(r["body"]) for r in receiver.requests]
    assert [b["event"] for b in bodies] == ["user.created", "user.verification.accepted"]
    assert bodies[0]["data"]["user_id"] == user["user_id"]


def test_a_500_is_retried_after_the_configured_delays(
    sandbox, control, receiver, api_client, settings
):
    from emulator.domain.webhooks import deliver_due

    settings.EMULATOR_WEBHOOK_RETRY_DELAYS = "5,10,15,20"
    register(sandbox, api_client, receiver.url)
    receiver.statuses = [500, 503]
    event_id = queue(control, api_client)["event_id"]
    assert deliver_due() == 1
    assert deliver_due() == 0
    sandbox.advance(4)
    assert deliver_due() == 0
    sandbox.advance(1.5)
    assert deliver_due() == 1
    sandbox.advance(9)
    assert deliver_due() == 0
    sandbox.advance(1.5)
    assert deliver_due() == 1
    log = sorted(deliveries(control, event_id=event_id), key=lambda e: e["attempt"])
    assert [(e["attempt"], e["status_code"]) for e in log] == [(1, 500), (2, 503), (3, 200)]
    assert len(receiver.requests) == 3
    assert len({r["body"] for r in receiver.requests}) == 1


def test_delivery_gives_up_after_four_retries(sandbox, control, receiver, api_client):
    register(sandbox, api_client, receiver.url)
    receiver.statuses = [500] * 10
    event_id = queue(control, api_client)["event_id"]
    for _ in range(7):
        control.post("/_control/webhooks/flush")
    log = deliveries(control, event_id=event_id)
    assert sorted(e["attempt"] for e in log) == [1, 2, 3, 4, 5]
    assert len(receiver.requests) == 5


def test_unreachable_receiver_is_an_attempt_with_no_status(sandbox, control, api_client):
    register(sandbox, api_client, "http://127.0.0.1:9/hooks")
    queue(control, api_client)
    control.post("/_control/webhooks/flush")
    [entry] = deliveries(control)
    assert entry["status_code"] is None and entry["outcome"] == "error"


def signed_with(receiver, secrets):
    """event_id -> the secret (among `secrets`) whose HMAC matches each received request."""
    signed = {}
    for request in receiver.requests:
        event_id = json.loads(request["body"])["data"]["event_id"]
        headers = {k.lower(): v for k, v in request["headers"].items()}
        signature = headers["x-signature-sha256"]
        signed.setdefault(event_id, []).append(
            next(s for s in secrets if verify(request["body"], signature, s))
        )
    return signed


def test_rotation_keeps_the_queued_secret_for_the_overlap_window(
    sandbox, control, receiver, api_client
):
    register(sandbox, api_client, receiver.url, "secret-old")
    long_queued = queue(control, api_client, n=1)["event_id"]
    sandbox.advance(120)
    recent = queue(control, api_client, n=2)["event_id"]
    sandbox.advance(30)
    register(sandbox, api_client, receiver.url, "secret-new")
    after = queue(control, api_client, n=3)["event_id"]
    sandbox.advance(59)
    control.post("/_control/webhooks/flush")
    assert signed_with(receiver, ("secret-old", "secret-new")) == {
        long_queued: ["secret-old"],
        recent: ["secret-old"],
        after: ["secret-new"],
    }
    slots = {e["event_id"]: e["secret"] for e in deliveries(control)}
    assert slots == {long_queued: "previous", recent: "previous", after: "current"}


def test_after_the_window_a_retry_switches_to_the_current_secret(
    sandbox, control, receiver, api_client
):
    register(sandbox, api_client, receiver.url, "secret-old")
    receiver.statuses = [500]
    event_id = queue(control, api_client)["event_id"]
    control.post("/_control/webhooks/flush")
    register(sandbox, api_client, receiver.url, "secret-new")
    sandbox.advance(61)
    control.post("/_control/webhooks/flush")
    assert signed_with(receiver, ("secret-old", "secret-new")) == {
        event_id: ["secret-old", "secret-new"]
    }
    log = sorted(deliveries(control, event_id=event_id), key=lambda e: e["attempt"])
    assert [(e["attempt"], e["secret"]) for e in log] == [(1, "current"), (2, "current")]
    assert log[0]["secret_fingerprint"] != log[1]["secret_fingerprint"]


def test_a_second_rotation_does_not_forget_the_first(sandbox, control, receiver, api_client):
    secrets = ("secret-1", "secret-2", "secret-3")
    register(sandbox, api_client, receiver.url, secrets[0])
    first = queue(control, api_client, n=1)["event_id"]
    sandbox.advance(10)
    register(sandbox, api_client, receiver.url, secrets[1])
    second = queue(control, api_client, n=2)["event_id"]
    sandbox.advance(10)
    register(sandbox, api_client, receiver.url, secrets[2])
    third = queue(control, api_client, n=3)["event_id"]
    control.post("/_control/webhooks/flush")
    assert signed_with(receiver, secrets) == {
        first: ["secret-1"],
        second: ["secret-2"],
        third: ["secret-3"],
    }


def test_a_delivery_left_sending_by_a_crash_is_retried_after_its_lease(
    sandbox, control, receiver, api_client, settings
):
    from emulator.domain.webhooks import _claim, deliver_due
    from emulator.models import WebhookDelivery

    settings.EMULATOR_WEBHOOK_LEASE_SECONDS = 30
    register(sandbox, api_client, receiver.url)
    event_id = queue(control, api_client)["event_id"]
    delivery = WebhookDelivery.objects.get(event__event_id=event_id)
    # What a process does right before it dies mid-send: the claim commits, nothing else does.
    assert _claim(delivery.pk)
    assert deliver_due() == 0
    assert control.post("/_control/webhooks/flush").json() == {"attempted": 0}
    sandbox.advance(31)
    assert deliver_due() == 1
    [request] = receiver.requests
    assert json.loads(request["body"])["data"]["event_id"] == event_id
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.lease_until) == ("delivered", 1, None)
    [entry] = deliveries(control, event_id=event_id)
    assert (entry["attempt"], entry["outcome"]) == (1, "delivered")


def test_dropped_webhooks_are_logged_and_not_sent(sandbox, control, receiver, api_client):
    register(sandbox, api_client, receiver.url)
    control.post("/_control/faults", json={"drop_webhooks": 1.0})
    event_id = queue(control, api_client)["event_id"]
    control.post("/_control/webhooks/flush")
    control.post("/_control/webhooks/flush")
    assert receiver.requests == []
    [entry] = deliveries(control, event_id=event_id)
    assert entry["outcome"] == "dropped" and entry["status_code"] is None
    control.delete("/_control/faults")


def test_event_without_registration_is_stored_not_queued(control, api_client):
    from emulator.models import WebhookEvent

    queued = queue(control, api_client, event="barcode_generated", event_id="evt_given")
    assert queued == {"event_id": "evt_given", "queued": False}
    assert WebhookEvent.objects.get(event_id="evt_given").event == "barcode_generated"


def test_registration_rules(sandbox, production, api_client):
    wrong_client = sandbox.post(
        "/webhooks/register",
        {"webhook_url": "https://x.example/h", "secret": "s", "client_uuid": "someone-else"},
    )
    assert wrong_client.status_code == 400
    assert wrong_client.json()["errors"][0]["field"] == "client_uuid"
    plain_http = production.post(
        "/webhooks/register",
        {"webhook_url": "http://x.example/h", "secret": "s", "client_uuid": api_client.client_id},
    )
    assert plain_http.status_code == 400
    assert plain_http.json()["errors"][0]["message"] == "must use HTTPS in production"
    missing = sandbox.post("/webhooks/register", {"client_uuid": api_client.client_id})
    assert {e["field"] for e in missing.json()["errors"]} == {"webhook_url", "secret"}


def test_control_events_need_a_known_client(control):
    import uuid

    response = control.post(
        "/_control/events", json={"client_id": str(uuid.uuid4()), "event": "card_payment"}
    )
    assert response.status_code == 404
