"""Smoke: the live emulator authenticates and quotes."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_live_quote(http, authed):
    headers = authed("sandbox")
    r = http.post("/sandbox/v1/quotations", json={"quote_currency": "MXN", "amount": 100}, headers=headers)
    assert r.status_code == 201, r.text
    assert r.headers["RateLimit-Limit"] == "1000"


async def test_inprocess_healthz(emulator_http):
    r = await emulator_http.get("/healthz")
    assert r.status_code == 200
