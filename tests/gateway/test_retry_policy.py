"""What the gateway sends again after a failure: the map entry by entry, and on the emulator."""

from __future__ import annotations

import ast
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.client import call_sync, upstream
from gateway.errors import (
    NotFoundError,
    RateLimited,
    ServerError,
    UpstreamError,
    UpstreamTimeout,
    ValidationError,
)
from gateway.models import Environment
from gateway.retry_policy import POLICY, Retry, RetryNotice, may_retry, rule_for
from tests.gateway.conftest import LiveEmulator

ROOT = Path(__file__).resolve().parents[2]
TEMPORARY: list[UpstreamError] = [
    ServerError("boom", status=500),
    UpstreamTimeout("dropped", code="connection_error"),
    UpstreamTimeout("slow", code="timeout"),
]
PERMANENT: list[UpstreamError] = [
    ValidationError("bad", status=400),
    NotFoundError("gone", status=404),
]


def _retries(operation: str, failure: UpstreamError, *, keyed: bool, attempt: int = 1) -> bool:
    method = "GET" if operation.endswith(("_get", "_list", "_balance")) else "POST"
    return may_retry(
        operation=operation,
        method=method,
        keyed=keyed,
        failure=failure,
        attempt=attempt,
        max_attempts=4,
    )


def _client_operations() -> set[str]:
    """Every operation name gateway/client.py sends (the first argument of `self._call`, the
    second of `self._read`, whose first is the answer's model)."""
    tree = ast.parse((ROOT / "gateway" / "client.py").read_text())
    position = {"_call": 0, "_read": 1}
    return {
        node.args[position[node.func.attr]].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in position
        and len(node.args) > position[node.func.attr]
        and isinstance(node.args[position[node.func.attr]], ast.Constant)
    }


def test_every_operation_the_client_sends_has_an_explained_entry() -> None:
    operations = _client_operations() | {"auth"}
    assert len(operations) > 15  # guards the scan
    assert operations - POLICY.keys() == set()
    assert all(len(rule.why) > 20 for rule in POLICY.values())


@pytest.mark.parametrize("operation", sorted(POLICY))
def test_each_entry_retries_temporary_failures_exactly_as_its_class_says(operation: str) -> None:
    retry = POLICY[operation].retry
    for failure in TEMPORARY:
        assert _retries(operation, failure, keyed=False) is (retry is Retry.SAFE)
        assert _retries(operation, failure, keyed=True) is (retry is not Retry.ONCE)
        # Never past the last attempt, whatever the class.
        assert _retries(operation, failure, keyed=True, attempt=4) is False


@pytest.mark.parametrize("operation", sorted(POLICY))
def test_each_entry_waits_out_a_429_and_never_repeats_a_refusal(operation: str) -> None:
    assert _retries(operation, RateLimited("slow down", status=429), keyed=False) is True
    for failure in PERMANENT:
        assert _retries(operation, failure, keyed=True) is False


def test_the_decided_entries() -> None:
    assert POLICY["payout_preview"].retry is Retry.SAFE
    assert POLICY["otp_send"].retry is Retry.SAFE  # a new code supersedes the previous one
    assert POLICY["payout_initiate"].retry is Retry.KEYED
    assert POLICY["user_create"].retry is Retry.KEYED
    assert POLICY["recipient_create"].retry is Retry.ONCE
    assert POLICY["virtual_account_create"].retry is Retry.ONCE


def test_an_unlisted_operation_is_a_read_when_a_get_and_keyed_otherwise() -> None:
    assert rule_for("something_new", method="GET").retry is Retry.SAFE
    assert rule_for("something_new", method="POST").retry is Retry.KEYED


# --- against the emulator -----------------------------------------------------------------------


def _otp_sends(emulator: LiveEmulator) -> list[Any]:
    return [r["status"] for r in emulator.witness.api_requests() if r["path"].endswith("/send")]


def test_otp_send_after_one_500_succeeds(live_emulator: LiveEmulator, sandbox: Environment) -> None:
    client = upstream(sandbox)
    call_sync(client.quotations.create, quote_currency="MXN", amount=100)  # token first
    live_emulator.faults(error_next=1)  # exactly the next request fails, whatever the timing
    sent = call_sync(client.verification.send_otp, email="otp@payops.test")
    assert sent.expires_at is not None
    statuses = _otp_sends(live_emulator)
    assert statuses[0] == 500 and statuses[-1] == 200


def test_otp_send_after_a_dropped_answer_sends_a_newer_code_that_counts(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    live_emulator.faults(drop_response_next=1)
    call_sync(client.verification.send_otp, email="otp@payops.test")
    mailbox = live_emulator.control("GET", "mailbox", params={"email": "otp@payops.test"})
    assert len(mailbox["messages"]) == 2  # the lost answer's code, and the resend's
    assert _otp_sends(live_emulator) == [None, 200]


def test_a_quote_after_a_dropped_answer_is_the_one_received(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    call_sync(client.quotations.create, quote_currency="MXN", amount=100)  # token first
    live_emulator.faults(drop_response_next=1)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    assert call_sync(client.quotations.get, quote.quote_id).quote_id == quote.quote_id
    assert live_emulator.witness.count("/sandbox/v1/quotations", "POST") == 3


def test_a_persistent_failure_says_how_many_attempts_were_sent(
    live_emulator: LiveEmulator, sandbox: Environment, settings: Any
) -> None:
    settings.GATEWAY_MAX_ATTEMPTS = 3
    client = upstream(sandbox)
    call_sync(client.quotations.create, quote_currency="MXN", amount=100)  # token first
    live_emulator.faults(error_rate=1.0)
    with pytest.raises(ServerError) as caught:
        call_sync(client.verification.send_otp, email="otp@payops.test")
    assert caught.value.attempts == 3 == len(_otp_sends(live_emulator))


def test_the_caller_hears_of_each_retry_before_its_wait(
    live_emulator: LiveEmulator, sandbox: Environment, settings: Any
) -> None:
    settings.GATEWAY_MAX_ATTEMPTS = 3
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    live_emulator.faults(rate_429=1.0)
    heard: list[RetryNotice] = []

    async def get_with_notices() -> Any:
        from gateway import transport

        return await transport.request(
            sandbox,
            operation="quotation_get",
            method="GET",
            path=f"v1/quotations/{quote.quote_id}",
            on_retry=heard.append,
        )

    with pytest.raises(RateLimited):
        call_sync(get_with_notices)
    assert [(n.attempt, n.next_attempt, n.max_attempts) for n in heard] == [(1, 2, 3), (2, 3, 3)]
    assert all(isinstance(n.failure, RateLimited) for n in heard)
    assert all(isinstance(n.next_try_at, datetime) and n.delay >= 1 for n in heard)
