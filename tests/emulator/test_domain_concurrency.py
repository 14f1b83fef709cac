"""Concurrent duplicates, dropped responses, the lifespan loop's jobs and the OpenAPI page."""

import json
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.servers import serve_in_thread

pytestmark = pytest.mark.django_db(transaction=True)

# What the webhook receiver sees once a new user's account has been activated.
ACTIVATION_EVENTS = [
    "user.created",
    "user.verification.accepted",
    "virtual_account.created",
    "virtual_account.activated",
]


def activation_due_with_webhooks(sandbox, receiver, api_client) -> str:
    """Registers the receiver, creates a user and an account, and moves past its activation."""
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
    return account_id


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
    from emulator.domain.webhooks import delivery_tick
    from emulator.loop import PERIODIC_JOBS

    assert tick_job in PERIODIC_JOBS and delivery_tick in PERIODIC_JOBS
    account_id = activation_due_with_webhooks(sandbox, receiver, api_client)
    for job in PERIODIC_JOBS:
        job()
    assert sandbox.get(f"/v1/virtual-accounts/{account_id}").json()["data"]["status"] == "active"
    received = [json.loads(r["body"])["event"] for r in receiver.requests]
    assert received == ACTIVATION_EVENTS


def test_lifespan_loop_activates_and_delivers_without_control_calls(
    sandbox, receiver, api_client, settings
):
    """A second, real uvicorn server with lifespan on: its loop runs tick and delivery by itself."""
    import time

    from emulator.asgi import application

    settings.EMULATOR_LOOP_INTERVAL = 0.2
    account_id = activation_due_with_webhooks(sandbox, receiver, api_client)
    with serve_in_thread(application, lifespan="on"):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(receiver.requests) < 4:
            time.sleep(0.1)
    assert sandbox.get(f"/v1/virtual-accounts/{account_id}").json()["data"]["status"] == "active"
    received = [json.loads(r["body"])["event"] for r in receiver.requests]
    assert received == ACTIVATION_EVENTS


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


def test_concurrent_fiat_payouts_never_overdraw_the_balance(sandbox):
    """Six payouts race for a balance that covers two: two win, four are INSUFFICIENT_FUNDS.

    Each client has one OTP at a time, so over HTTP the OTP already serialises a client's fiat
    payouts; the race here is run on the payout transaction itself (no OTP), from real threads.
    """
    from decimal import Decimal

    from django.db import connection

    from emulator.domain.payout_requests import parse_payout_request
    from emulator.domain.payouts import payout_create
    from emulator.errors import EmulatorError
    from emulator.models import ApiClient, Payout, VirtualAccount

    account_id, recipient_id = sandbox.funded_setup("240.00")
    account = VirtualAccount.objects.select_related("client").get(id=account_id)
    client = ApiClient.objects.get(pk=account.client_id)
    start = threading.Barrier(6)

    def attempt(_: int) -> str:
        try:
            request = parse_payout_request({"recipient_id": recipient_id, "amount": "100.00"})
            start.wait()
            payout_create(
                client=client,
                environment="sandbox",
                account_id=account.id,
                request=request,
                otp=None,
            )
            return "created"
        except EmulatorError as exc:
            return str(exc.body.get("code"))
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=6) as pool:
        outcomes = sorted(pool.map(attempt, range(6)))
    assert outcomes == ["INSUFFICIENT_FUNDS"] * 4 + ["created"] * 2, outcomes
    account.refresh_from_db()
    debited = sum(p.debited_amount for p in Payout.objects.filter(virtual_account_id=account_id))
    assert account.balance >= 0
    assert account.balance + debited == Decimal("240.00")
    assert sandbox.balance(account_id) == f"{account.balance:.2f}"
