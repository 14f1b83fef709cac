"""Fault injection through /_control/faults, over real HTTP and in-process."""

import time

import httpx
import pytest

from emulator import faults
from emulator.edge import ResponseDropped
from emulator.models import Quote

pytestmark = pytest.mark.django_db(transaction=True)

QUOTE = {"quote_currency": "MXN", "amount": 100}


def test_error_rate_one_answers_500_to_api_calls_only(http, control, authed):
    headers = authed("sandbox")
    set_ = control.post("/_control/faults", json={"error_rate": 1.0})
    assert set_.status_code == 200 and set_.json()["error_rate"] == 1.0
    response = http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers)
    assert response.status_code == 500
    assert "RateLimit-Limit" in response.headers
    assert http.get("/healthz").status_code == 200
    assert Quote.objects.count() == 0
    cleared = control.delete("/_control/faults")
    assert cleared.json() == faults.Faults().as_dict()
    assert http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers).status_code == 201


def test_error_next_fails_exactly_the_next_requests(http, control, authed):
    headers = authed("sandbox")
    control.post("/_control/faults", json={"error_next": 2})
    statuses = [
        http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers).status_code
        for _ in range(3)
    ]
    assert statuses == [500, 500, 201]
    assert faults.current().error_next == 0
    assert Quote.objects.count() == 1


def test_rate_429_one(http, control, authed):
    headers = authed("sandbox")
    control.post("/_control/faults", json={"rate_429": 1.0})
    response = http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers)
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "1"
    assert response.json()["code"] == "rate_limited"


def test_drop_response_next_takes_effect_without_an_answer(http, control, authed):
    headers = authed("sandbox")
    control.post("/_control/faults", json={"drop_response_next": 1})
    # A read is not a mutation: it is answered and does not use the credit.
    assert http.get("/sandbox/v1/quotations/x", headers=headers).status_code == 404
    with pytest.raises(httpx.TransportError):
        http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers)
    assert Quote.objects.count() == 1  # the mutation happened
    assert faults.current().drop_response_next == 0
    assert http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers).status_code == 201
    assert Quote.objects.count() == 2


def test_latency_is_added(http, control, authed):
    headers = authed("sandbox")
    control.post("/_control/faults", json={"latency_ms": 300})
    started = time.monotonic()
    response = http.get("/sandbox/v1/quotations/x", headers=headers)
    assert response.status_code == 404
    assert time.monotonic() - started >= 0.3  # a lower bound: the sleep always happens


def test_fault_values_are_validated(control):
    assert control.post("/_control/faults", json={"error_rate": 1.5}).status_code == 400
    assert (
        control.post("/_control/faults", json={"drop_webhooks": 0.25}).json()["drop_webhooks"]
        == 0.25
    )
    assert faults.current().drop_webhooks == 0.25


async def test_drop_response_in_process(emulator_http, transactional_db):
    from asgiref.sync import sync_to_async
    from django.db import connections

    from tests.emulator.conftest import make_credentials

    creds = await sync_to_async(make_credentials)("inproc", rate_per_second=100, max_concurrent=10)
    auth = await emulator_http.post(
        "/sandbox/auth",
        json={"client_id": creds.client_id, "password": creds.password},
        headers={"x-api-key": creds.api_key},
    )
    headers = {
        "x-api-key": creds.api_key,
        "Authorization": "Bearer " + auth.json()["data"]["access_token"],
    }
    try:
        await sync_to_async(faults.faults_set)(drop_response_next=1)
        with pytest.raises(ResponseDropped):
            await emulator_http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers)
        assert await sync_to_async(Quote.objects.count)() == 1
        ok = await emulator_http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers)
        assert ok.status_code == 201
    finally:
        # sync_to_async ran in asgiref's shared thread: give its connection back.
        await sync_to_async(connections.close_all)()
