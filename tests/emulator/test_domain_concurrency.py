"""Concurrent duplicates, dropped responses, the lifespan loop's jobs and the OpenAPI page."""

import json
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_duplicate_payouts_create_one_payout(sandbox, live_url):
    from emulator.models import Payout

    account_id, recipient_id = sandbox.funded_setup()
    code = sandbox.otp()
    key = str(uuid.uuid4())
    body = {"recipient_id": recipient_id, "amount": "100.00"}
    headers = {**sandbox.headers, "idempotency-key": key, "x-validation-header": code}

    def send(_: int) -> httpx.Response:
        with httpx.Client(base_url=live_url, timeout=30) as client:
            return client.post(
                f"/sandbox/v1/virtual-accounts/{account_id}/payout", json=body, headers=headers
            )

    with ThreadPoolExecutor(max_workers=4) as pool:
        responses = list(pool.map(send, range(4)))
    assert [r.status_code for r in responses] == [201] * 4, [r.text for r in responses]
    assert len({json.dumps(r.json(), sort_keys=True) for r in responses}) == 1
    assert Payout.objects.count() == 1
    assert sandbox.balance(account_id) == "884.90"


def test_periodic_jobs_activate_accounts_and_deliver_webhooks(sandbox, receiver, api_client):
    from emulator.domain.tick import tick_job
    from emulator.loop import PERIODIC_JOBS
    from emulator.webhooks import delivery_tick

    assert tick_job in PERIODIC_JOBS and delivery_tick in PERIODIC_JOBS
    sandbox.post(
        "/webhooks/register",
        {"webhook_url": receiver.url, "secret": "s", "client_uuid": api_client.client_id},
    )
    user = sandbox.create_user()
    account_id = sandbox.post(
        "/v1/virtual-accounts",
        {"user_id": user["user_id"], "type": "US_BANK", "bank": "slovak_savings_bank"},
    ).json()["data"]["id"]
    sandbox.advance(5)
    for job in PERIODIC_JOBS:
        job()
    assert sandbox.get(f"/v1/virtual-accounts/{account_id}").json()["data"]["status"] == "active"
    received = [json.loads(r["body"])["event"] for r in receiver.requests]
    assert received == [
        "user.created",
        "user.verification.accepted",
        "virtual_account.created",
        "virtual_account.activated",
    ]


def test_lifespan_loop_activates_and_delivers_without_control_calls(
    sandbox, receiver, api_client, settings
):
    """A second, real uvicorn server with lifespan on: its loop runs tick and delivery by itself."""
    import socket
    import threading
    import time

    import uvicorn

    from emulator.asgi import application

    settings.EMULATOR_LOOP_INTERVAL = 0.2
    sandbox.post(
        "/webhooks/register",
        {"webhook_url": receiver.url, "secret": "s", "client_uuid": api_client.client_id},
    )
    user = sandbox.create_user()
    account_id = sandbox.post(
        "/v1/virtual-accounts",
        {"user_id": user["user_id"], "type": "US_BANK", "bank": "slovak_savings_bank"},
    ).json()["data"]["id"]
    sandbox.advance(5)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(application, lifespan="on", log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(receiver.requests) < 4:
            time.sleep(0.1)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
    assert sandbox.get(f"/v1/virtual-accounts/{account_id}").json()["data"]["status"] == "active"
    received = [json.loads(r["body"])["event"] for r in receiver.requests]
    assert received == [
        "user.created",
        "user.verification.accepted",
        "virtual_account.created",
        "virtual_account.activated",
    ]


def test_retry_after_a_dropped_response_replays_the_payout(sandbox, control):
    from emulator.models import Payout

    account_id, recipient_id = sandbox.funded_setup()
    code = sandbox.otp()
    key = str(uuid.uuid4())
    body = {"recipient_id": recipient_id, "amount": "100.00"}
    control.post("/_control/faults", json={"drop_response_next": 1})
    with pytest.raises(httpx.TransportError):
        sandbox.payout(account_id, body, otp=code, key=key)
    assert Payout.objects.count() == 1
    retried = sandbox.payout(account_id, body, otp=code, key=key)
    assert retried.status_code == 201, retried.text
    assert retried.json()["data"]["id"] == str(Payout.objects.get().payout_id)
    assert Payout.objects.count() == 1
    assert sandbox.balance(account_id) == "884.90"


def test_openapi_page_documents_the_domain_bodies(http):
    paths = http.get("/sandbox/openapi.json").json()["paths"]
    payout = paths["/sandbox/v1/virtual-accounts/{account_id}/payout"]["post"]
    schema = payout["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["recipient_id", "amount"]
    assert schema["properties"]["amount"]["pattern"] == r"^\d+(\.\d{1,2})?$"
    for path in ("/sandbox/v1/users", "/sandbox/v1/recipients", "/sandbox/webhooks/register"):
        assert "requestBody" in paths[path]["post"]
