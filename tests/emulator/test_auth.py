"""POST /auth and the token checks of every other call, over real HTTP (interface.md 5 and 7)."""

import pytest

from emulator import clock, tokens
from tests.emulator.conftest import make_credentials

pytestmark = pytest.mark.django_db(transaction=True)

QUOTE = {"quote_currency": "MXN", "amount": 100}


@pytest.mark.parametrize("prefix", ["", "/sandbox"])
def test_auth_returns_a_bearer_token(http, api_client, prefix):
    response = http.post(
        prefix + "/auth",
        json={"client_id": api_client.client_id, "password": api_client.password},
        headers={"x-api-key": api_client.api_key},
    )
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"message", "data"}
    assert body["data"]["token_type"] == "Bearer"
    ttl = 86400 if prefix else 3600  # the live sandbox's lifetime; the documented one
    assert body["data"]["expires_in"] == ttl
    claims = tokens.decode(body["data"]["access_token"])
    assert claims["client_id"] == api_client.client_id
    assert claims["env"] == ("sandbox" if prefix else "production")
    assert claims["exp"] - claims["iat"] == ttl


def test_production_token_expires_after_an_hour(http, authed):
    headers = authed("production")
    body = {"quote_currency": "MXN", "amount": 100}
    clock.advance(3540)
    assert http.post("/v1/quotations", json=body, headers=headers).status_code == 201
    clock.advance(61)
    expired = http.post("/v1/quotations", json=body, headers=headers)
    assert (expired.status_code, expired.json()) == (401, {"message": "token has expired"})


def test_auth_errors(http, api_client):
    ok_body = {"client_id": api_client.client_id, "password": api_client.password}
    missing_key = http.post("/sandbox/auth", json=ok_body)
    assert (missing_key.status_code, missing_key.json()) == (
        401,
        {"code": "unauthorized", "message": "invalid API key"},
    )
    wrong_key = http.post("/sandbox/auth", json=ok_body, headers={"x-api-key": "nope"})
    assert wrong_key.json() == {"code": "unauthorized", "message": "invalid API key"}
    wrong_password = http.post(
        "/sandbox/auth",
        json={"client_id": api_client.client_id, "password": "wrong"},
        headers={"x-api-key": api_client.api_key},
    )
    assert (wrong_password.status_code, wrong_password.json()) == (
        401,
        {"code": "unauthorized", "message": "invalid client ID or password"},
    )
    other = make_credentials("other")
    crossed = http.post(
        "/sandbox/auth",
        json={"client_id": other.client_id, "password": other.password},
        headers={"x-api-key": api_client.api_key},
    )
    assert crossed.json()["message"] == "invalid client ID or password"
    missing_field = http.post(
        "/sandbox/auth",
        json={"client_id": api_client.client_id},
        headers={"x-api-key": api_client.api_key},
    )
    assert (missing_field.status_code, missing_field.json()) == (
        400,
        {"code": "validation_error", "message": "password is required"},
    )


def test_calls_need_api_key_then_token(http, authed):
    headers = authed("sandbox")
    no_key = http.post("/sandbox/v1/quotations", json=QUOTE, headers={"Authorization": "x"})
    assert (no_key.status_code, no_key.json()) == (
        401,
        {"code": "unauthorized", "message": "invalid API key"},
    )
    no_token = http.post(
        "/sandbox/v1/quotations", json=QUOTE, headers={"x-api-key": headers["x-api-key"]}
    )
    assert (no_token.status_code, no_token.json()) == (
        401,
        {"code": "unauthorized", "message": "no authorization token provided"},
    )
    forged = http.post(
        "/sandbox/v1/quotations",
        json=QUOTE,
        headers={**headers, "Authorization": headers["Authorization"][:-3] + "abc"},
    )
    assert forged.status_code == 401
    assert forged.json()["code"] == "unauthorized"


def test_token_of_one_environment_fails_in_the_other(http, authed):
    sandbox = authed("sandbox")
    production = authed("production")
    assert http.post("/v1/quotations", json=QUOTE, headers=sandbox).status_code == 401
    assert http.post("/sandbox/v1/quotations", json=QUOTE, headers=production).status_code == 401
    assert http.post("/v1/quotations", json=QUOTE, headers=production).status_code == 201
    assert http.post("/sandbox/v1/quotations", json=QUOTE, headers=sandbox).status_code == 201


def test_token_expires_on_the_emulator_clock(http, authed):
    headers = authed("sandbox")
    clock.advance(86400 - 60)
    assert http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers).status_code == 201
    clock.advance(61)
    expired = http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers)
    assert (expired.status_code, expired.json()) == (401, {"message": "token has expired"})


def test_token_without_client_id_claim(http, api_client):
    now = int(clock.now().timestamp())
    token = tokens.encode({"env": "sandbox", "iat": now, "exp": now + 3600})
    response = http.post(
        "/sandbox/v1/quotations",
        json=QUOTE,
        headers={"x-api-key": api_client.api_key, "Authorization": f"Bearer {token}"},
    )
    assert (response.status_code, response.json()) == (
        401,
        {"code": "unauthorized", "message": "no client ID found in claims"},
    )


def test_token_of_another_client_is_refused(http, authed, api_client):
    other = make_credentials("other", rate_per_second=1000, max_concurrent=50)
    other_headers = authed("sandbox", other)
    mixed = {"x-api-key": api_client.api_key, "Authorization": other_headers["Authorization"]}
    assert http.post("/sandbox/v1/quotations", json=QUOTE, headers=mixed).status_code == 401


def test_rate_limit_headers_on_every_response(http, authed, api_client):
    headers = authed("sandbox")
    responses = [
        http.post("/sandbox/auth", json={}, headers={"x-api-key": api_client.api_key}),
        http.post("/sandbox/auth", json={}),
        http.post("/sandbox/v1/quotations", json=QUOTE, headers=headers),
        http.post("/sandbox/v1/quotations", json={}, headers=headers),
        http.get("/sandbox/v1/quotations/unknown", headers=headers),
        http.post("/v1/quotations", json=QUOTE, headers=headers),
    ]
    for response in responses:
        for name in ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"):
            assert name in response.headers, (response.status_code, response.text)
        assert "Retry-After" not in response.headers
