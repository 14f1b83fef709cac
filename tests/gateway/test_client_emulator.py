"""The gateway against the emulator over real HTTP: prefix, tokens, 401, 429, 500, keys, log."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from decimal import Decimal
from typing import Any

import pytest

from gateway.client import call_sync, upstream
from gateway.errors import (
    AuthenticationError,
    BudgetExhausted,
    NotFoundError,
    RateLimited,
    ServerError,
    UpstreamTimeout,
    ValidationError,
)
from gateway.models import Environment, UpstreamCall
from gateway.schemas import QuoteStatus
from tests.gateway.conftest import LiveEmulator


def _wait_for(predicate: Any, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.02)


def test_quotation_round_trip_keeps_the_sandbox_prefix(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=Decimal("100"))
    assert quote.status is QuoteStatus.ACTIVE and quote.quote_currency == "MXN"
    assert isinstance(quote.base_amount, Decimal)
    same = call_sync(client.quotations.get, quote.quote_id)
    assert same.quote_id == quote.quote_id
    updated = call_sync(client.quotations.update, quote.quote_id, amount=250)
    assert updated.base_amount == Decimal("250")
    paths = [r["path"] for r in live_emulator.witness.api_requests()]
    assert paths and all(p.startswith("/sandbox/") for p in paths), paths


def test_one_token_is_reused_for_many_calls(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    for _ in range(3):
        call_sync(client.quotations.get, quote.quote_id)
    assert live_emulator.witness.count("/sandbox/auth") == 1


def test_expired_token_reauthenticates_once_and_retries(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    # Past the token's lifetime on the emulator's clock (our cache still believes in it).
    live_emulator.advance(86400 + 60)
    with pytest.raises(NotFoundError):
        # The quote itself is long expired (fine), but the call got through after a new token.
        call_sync(client.quotations.update, "00000000-0000-4000-8000-000000000000", amount=1)
    statuses = [(r["path"], r["status"]) for r in live_emulator.witness.api_requests()]
    assert live_emulator.witness.count("/sandbox/auth") == 2
    assert ("/sandbox/v1/quotations/00000000-0000-4000-8000-000000000000", 401) in statuses
    assert quote.quote_id


def test_wrong_credentials_fail_once_without_a_retry_storm(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    sandbox.set_credentials(password="not-the-password")
    sandbox.save()
    with pytest.raises(AuthenticationError) as caught:
        call_sync(upstream(sandbox).quotations.create, quote_currency="MXN", amount=100)
    assert caught.value.status == 401 and caught.value.code == "unauthorized"
    assert live_emulator.witness.count("/sandbox/auth") == 1
    assert live_emulator.witness.count("/sandbox/v1/quotations") == 0


def test_validation_error_shape_reaches_the_caller(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    with pytest.raises(ValidationError) as caught:
        call_sync(upstream(sandbox).quotations.create, quote_currency="XXX", amount=100)
    assert "valid_quote_currencies" in caught.value.details
    assert live_emulator.witness.count("/sandbox/v1/quotations", "POST") == 1


def _clear_faults_after(live_emulator: LiveEmulator, status: int) -> threading.Thread:
    def clear() -> None:
        _wait_for(lambda: status in live_emulator.witness.statuses())
        live_emulator.control("DELETE", "faults")

    thread = threading.Thread(target=clear)
    thread.start()
    return thread


def test_429_is_waited_out_and_never_reaches_the_caller(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    live_emulator.witness.clear()
    live_emulator.faults(rate_429=1.0)
    clearer = _clear_faults_after(live_emulator, 429)
    got = call_sync(client.quotations.get, quote.quote_id)
    clearer.join()
    assert got.quote_id == quote.quote_id
    requests = live_emulator.witness.api_requests()
    assert requests[0]["status"] == 429 and requests[-1]["status"] == 200
    # Retry-After (1 s) was honoured before the next attempt.
    assert requests[1]["start"] - requests[0]["start"] >= 0.95


def test_429_on_every_attempt_becomes_rate_limited(
    live_emulator: LiveEmulator, sandbox: Environment, settings: Any
) -> None:
    settings.GATEWAY_MAX_ATTEMPTS = 2
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    live_emulator.faults(rate_429=1.0)
    with pytest.raises(RateLimited) as caught:
        call_sync(client.quotations.get, quote.quote_id)
    assert caught.value.retryable and caught.value.retry_after == 1
    assert live_emulator.witness.count(f"/quotations/{quote.quote_id}") == 2


def test_500_on_a_get_is_retried(live_emulator: LiveEmulator, sandbox: Environment) -> None:
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    live_emulator.faults(error_rate=1.0)
    clearer = _clear_faults_after(live_emulator, 500)
    assert call_sync(client.quotations.get, quote.quote_id).quote_id == quote.quote_id
    clearer.join()
    assert 500 in live_emulator.witness.statuses()


def _user(client: Any) -> str:
    """An upstream end user (created with a key), for calls that need one."""
    user = call_sync(
        client.users.create,
        idempotency_key=str(uuid.uuid4()),
        email=f"ada+{uuid.uuid4().hex[:6]}@example.com",
        phone_number="+15555550100",
        first_name="Ada",
        last_name="Lovelace",
        country="US",
    )
    return str(user.user_id)


def test_500_on_a_mutation_without_key_is_not_retried(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    user_id = _user(client)
    live_emulator.faults(error_rate=1.0)
    # Opening an account has no key: a repeat could open two (gateway.retry_policy: ONCE).
    with pytest.raises(ServerError) as caught:
        call_sync(client.virtual_accounts.create, user_id=user_id, mode="fiat")
    assert caught.value.attempts == 1
    assert live_emulator.witness.count("/sandbox/v1/virtual-accounts", "POST") == 1


def test_dropped_response_without_key_is_a_timeout_not_a_retry(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    user_id = _user(client)
    live_emulator.faults(drop_response_next=1)
    with pytest.raises(UpstreamTimeout):
        call_sync(client.virtual_accounts.create, user_id=user_id, mode="fiat")
    assert live_emulator.witness.count("/sandbox/v1/virtual-accounts", "POST") == 1


def test_dropped_response_with_idempotency_key_makes_one_user(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    key = str(uuid.uuid4())
    email = f"ada+{uuid.uuid4().hex[:6]}@example.com"
    call_sync(client.quotations.create, quote_currency="MXN", amount=100)  # token first
    live_emulator.faults(drop_response_next=1)
    user = call_sync(
        client.users.create,
        idempotency_key=key,
        email=email,
        phone_number="+15555550100",
        first_name="Ada",
        last_name="Lovelace",
        country="US",
    )
    posts = [r for r in live_emulator.witness.api_requests() if r["path"].endswith("/v1/users")]
    assert len(posts) == 2  # the dropped one and the replay
    from emulator.models import EmulatedUser

    assert EmulatedUser.objects.filter(email=email).count() == 1
    assert call_sync(client.users.get, user.user_id).email == email
    attempts = list(
        UpstreamCall.objects.filter(operation="user_create").values_list(
            "attempt", "status", "idempotency_key"
        )
    )
    assert sorted(attempts) == [(1, None, key), (2, 201, key)]


def test_secrets_never_reach_logs_or_the_call_log(
    live_emulator: LiveEmulator, sandbox: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    call_sync(client.quotations.get, quote.quote_id)
    token = call_sync(client.auth.token).access_token
    secrets = [sandbox.password, sandbox.api_key, token]
    stored = " ".join(
        f"{c.request_body} {c.response_body} {c.path} {c.error_code}"
        for c in UpstreamCall.objects.all()
    )
    assert UpstreamCall.objects.filter(operation="auth").exists()
    for secret in secrets:
        assert secret not in caplog.text
        assert secret not in stored
    auth_row = UpstreamCall.objects.filter(operation="auth").first()
    assert auth_row is not None and "[redacted]" in auth_row.request_body
    assert sandbox.client_id in auth_row.request_body  # the id is not a secret


def test_call_log_records_each_attempt(live_emulator: LiveEmulator, sandbox: Environment) -> None:
    client = upstream(sandbox, background=True)
    with pytest.raises(NotFoundError):
        call_sync(client.quotations.get, "00000000-0000-4000-8000-000000000001")
    row = UpstreamCall.objects.get(operation="quotation_get")
    assert (row.method, row.status, row.attempt, row.priority) == ("GET", 404, 1, "background")
    assert row.path == "/v1/quotations/00000000-0000-4000-8000-000000000001"
    assert row.error_code == "QUOTE_NOT_FOUND"
    assert row.environment_id == sandbox.pk


def test_a_broken_call_log_never_breaks_the_call(
    live_emulator: LiveEmulator, sandbox: Environment, settings: Any
) -> None:
    # A body limit the column cannot take is the simplest real way to make the write fail.
    settings.GATEWAY_CALL_LOG_BODY_LIMIT = "not a number"
    quote = call_sync(upstream(sandbox).quotations.create, quote_currency="MXN", amount=100)
    assert quote.quote_id
    assert not UpstreamCall.objects.exists()


def test_upstream_quota_headers_pause_before_a_429(live_emulator: LiveEmulator) -> None:
    from tests.gateway.conftest import make_environment

    # The upstream's weekly quota (3) is smaller than what we believe we may spend: its
    # RateLimit headers are the truth, so nothing more is sent once they say it is spent.
    environment = make_environment(live_emulator, weekly_quota=3, weekly_budget=10_000)
    client = upstream(environment)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)  # + /auth
    call_sync(client.quotations.get, quote.quote_id)  # the third request: Remaining 0
    with pytest.raises(BudgetExhausted) as caught:
        call_sync(client.quotations.get, quote.quote_id)
    # At once, with the budget error: nobody waits days for the reset.
    assert caught.value.code == "budget_exhausted" and (caught.value.retry_after or 0) > 60
    assert len(live_emulator.witness.api_requests()) == 3
    assert 429 not in live_emulator.witness.statuses()


def test_resource_error_shape_gives_field_errors(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    with pytest.raises(ValidationError) as caught:
        call_sync(
            upstream(sandbox).users.create,
            idempotency_key=str(uuid.uuid4()),
            email="not-an-email",
            phone_number="+15555550100",
            first_name="Ada",
            last_name="Lovelace",
            country="US",
        )
    assert caught.value.status == 400 and caught.value.code
    assert "email" in caught.value.form_errors(), caught.value.field_errors


def test_429_on_a_mutation_without_key_is_retried(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    user_id = _user(client)
    live_emulator.witness.clear()
    live_emulator.faults(rate_429=1.0)
    clearer = _clear_faults_after(live_emulator, 429)
    # Opening an account is sent once on a 5xx, but a 429 was refused before it was handled.
    account = call_sync(client.virtual_accounts.create, user_id=user_id, mode="fiat")
    clearer.join()
    posts = [r["status"] for r in live_emulator.witness.api_requests()]
    assert posts[0] == 429 and posts[-1] == 201 and account.id
    from emulator.models import VirtualAccount as EmulatedAccount

    assert EmulatedAccount.objects.count() == 1  # the refused attempt created nothing
