"""
One logical upstream call, as the steps `request` runs: freeze the target; for each attempt,
commit its call-log row, take a limiter slot and the token, send, settle the attempt; then return
the body, refuse a spent budget, re-authenticate once, or retry when that is safe.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection

from console import metrics
from gateway import call_log, connections, limiter, retry_policy, tokens
from gateway.attempt import Attempt, Call, failure_of
from gateway.errors import (
    AuthenticationError,
    BudgetExhausted,
    CalledInTransaction,
    PermanentError,
    UpstreamError,
)
from gateway.limiter import Priority, Refusal
from gateway.limiter.policy import Answer
from gateway.models import Environment
from gateway.schemas import AccessToken
from gateway.target import Target
from gateway.target import resolve as target_for

logger = logging.getLogger("gateway")


def fill(path: str, *params: str) -> str:
    """`{}` placeholders in `path` filled with `params`, each percent-encoded as one segment."""
    return path.format(*(quote(str(p), safe="") for p in params)) if params else path


def join_url(api_root: str, path: str, *params: str) -> str:
    """
    `api_root` + "/" + `path`, keeping every segment of the root (the `/sandbox` prefix above all):
    never `urljoin`, which drops the root's path for a path starting with "/". The same join as
    `Target.url`, the one a call makes (once).
    """
    return api_root.rstrip("/") + "/" + fill(path, *params).lstrip("/")


def backoff_seconds(attempt: int, retry_after: float | None = None) -> float:
    """Exponential backoff with full jitter; never shorter than the upstream's Retry-After."""
    ceiling = min(settings.GATEWAY_BACKOFF_MAX, settings.GATEWAY_BACKOFF_BASE * 2 ** (attempt - 1))
    delay = random.uniform(0, ceiling)  # noqa: S311
    return max(delay, retry_after or 0.0)


def outside_transaction() -> None:
    """
    Refuse to go on inside the caller's `transaction.atomic()` (see CalledInTransaction). Run in
    the caller's own thread, whose database connection holds its transaction. The test-case
    wrapper of Django's TestCase / pytest-django `db` is not the caller's and does not count.
    """
    blocks = getattr(connection, "atomic_blocks", [])
    if connection.in_atomic_block and any(not b._from_testcase for b in blocks):
        raise CalledInTransaction(
            "the gateway refuses to run inside transaction.atomic(): its idempotency key and call "
            "log must be committed before the request; call the upstream outside the block "
            "(docs/gateway.md, Transactions)"
        )


def _prepare(environment: Environment) -> Target:
    outside_transaction()
    return target_for(environment)


async def _frozen_target(environment: Environment | Target) -> Target:
    """The call's frozen target (checked outside the caller's transaction, in its thread)."""
    if isinstance(environment, Target):
        return environment
    return await sync_to_async(_prepare)(environment)


async def request(
    environment: Environment | Target,
    *,
    operation: str,
    method: str,
    path: str,
    json: Any = None,
    params: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    idempotency_key: str | None = None,
    priority: Priority = Priority.STAFF,
    authenticated: bool = True,
    on_retry: Callable[[retry_policy.RetryNotice], None] | None = None,
) -> Any:
    """
    Send one logical call and return its parsed JSON body, or raise an UpstreamError (whose
    `attempts` says how many were sent). Retried with backoff (on timeouts, dropped answers, 429
    and 5xx) only when `gateway.retry_policy` says sending it again is safe for this operation; a
    429 for the weekly quota fails at once (BudgetExhausted). `on_retry` (sync, run in the
    caller's thread) hears of each retry before its wait, e.g. to show a person the progress.
    Any 401 of an authenticated call re-authenticates once and retries once. Refuses to run
    inside the caller's transaction (CalledInTransaction).
    """
    call = Call(
        await _frozen_target(environment),
        operation=operation,
        method=method,
        path=path,
        json=json,
        params=params,
        headers=headers,
        idempotency_key=idempotency_key,
        priority=priority,
        authenticated=authenticated,
    )
    max_attempts = int(settings.GATEWAY_MAX_ATTEMPTS)
    reauthenticated = False
    attempt = 0
    while True:
        attempt += 1
        sent = await _send_attempt(call, attempt)
        if sent.failure is None:
            return _success_body(sent.response)
        _refuse_spent_budget(sent.answer, call.priority)
        if _needs_new_token(call, sent.failure) and not reauthenticated:
            reauthenticated = True
            await tokens.invalidate(call.target, token=sent.token)
            continue
        sent.failure.attempts = attempt
        if call.may_retry(sent.failure, attempt=attempt, max_attempts=max_attempts):
            await _wait_to_retry(operation, sent.failure, attempt, max_attempts, on_retry)
            continue
        raise sent.failure


@dataclass
class _Sent:
    """What one attempt came back with: `failure` is None only for a successful answer."""

    response: httpx.Response | None
    failure: UpstreamError | None
    answer: Answer | None  # the limiter's reading of the answer (None: still in flight)
    token: str  # the token it was sent with ("" for none)


async def _send_attempt(call: Call, attempt: int) -> _Sent:
    """One attempt: its call-log row, a slot and the token, the request, then its bookkeeping."""
    # The row is committed before the request (and before the wait for a slot, which keeps
    # the write out of the slot's time: the rate window counts from each call's end).
    row_id = await sync_to_async(call_log.open_row)(call.record(attempt))
    held, token = await _slot_and_token(call, row_id)
    this = Attempt(held, row_id, time.monotonic())
    response, error = await _send(call, this, token)
    answer, duration_ms, failure = await _settle(this, response, error)
    metrics.upstream_call_observed(
        operation=call.operation, failure=failure, seconds=duration_ms / 1000
    )
    logger.info(
        "upstream %s %s %s -> %s in %dms (attempt %d)",
        call.target.environment_id,
        call.method,
        call.operation,
        response.status_code if response is not None else "-",
        duration_ms,
        attempt,
    )
    return _Sent(response, failure, answer, token)


async def _drop_unsent(row_id: int | None) -> None:
    await asyncio.shield(sync_to_async(call_log.drop_row)(row_id))  # nothing was sent


async def _slot_and_token(call: Call, row_id: int | None) -> tuple[limiter.Slot, str]:
    """
    A slot from the shared limiter, then the token. The token is read when the slot is granted,
    never before the wait: a caller that queued through a refresh sends the new token, not the
    one it saw before waiting. If the attempt never gets that far, its row is dropped.
    """
    try:
        held = await limiter.acquire(call.target, call.priority)
    except BaseException:
        await _drop_unsent(row_id)
        raise
    if not call.authenticated:
        return held, ""
    cached = await tokens.current(call.target)
    if cached is not None:
        return held, cached
    # /auth needs a slot of its own: give this one back while the token is fetched.
    await limiter.give_back(held)
    try:
        fresh = await tokens.get_token(call.target, authenticate)
        held = await limiter.acquire(call.target, call.priority)
    except BaseException:
        await _drop_unsent(row_id)
        raise
    return held, await tokens.current(call.target) or fresh


async def _send(
    call: Call, this: Attempt, token: str
) -> tuple[httpx.Response | None, BaseException | None]:
    """The HTTP request on the kept-alive connection: its response, or the transport error."""
    try:
        response = await connections.send(
            call.target.pool_key,
            call.method,
            call.url,
            content=call.content,
            params=call.params,
            headers=call.send_headers(token),
            renew=functools.partial(limiter.keep_alive, this.held),
            on_late=this.end,
        )
    except httpx.TransportError as exc:
        return None, exc
    return response, None


async def _settle(
    this: Attempt, response: httpx.Response | None, error: BaseException | None
) -> tuple[Answer | None, int, UpstreamError | None]:
    """End the attempt's bookkeeping now, unless the request lives on (then it ends late)."""
    if isinstance(error, connections.LeftInFlight):
        # The caller's wait ran out but the request lives on: `end` runs when it really ends,
        # and until then the slot stays taken (the upstream still counts the request).
        duration_ms = int((time.monotonic() - this.started) * 1000)
        return None, duration_ms, failure_of(None, error)
    return await asyncio.shield(sync_to_async(this.end)(response, error))


def _success_body(response: httpx.Response | None) -> Any:
    """The parsed JSON of a successful answer ({} when empty)."""
    assert response is not None
    if not response.content:
        return {}
    try:
        return response.json()
    except ValueError as exc:
        raise PermanentError(
            "the upstream answered success with a body that is not JSON",
            status=response.status_code,
            code="invalid_body",
        ) from exc


def _refuse_spent_budget(answer: Answer | None, priority: Priority) -> None:
    """A 429 that must not be waited out fails at once (see `quota_refused`)."""
    if answer is None or answer.refusal is Refusal.NONE:
        return
    give_up = quota_refused(answer, patience=limiter.patience(priority))
    if give_up:
        raise BudgetExhausted(give_up, status=429, code="budget_exhausted", retry_after=answer.wait)


def _needs_new_token(call: Call, failure: UpstreamError) -> bool:
    """A 401 of an authenticated call: its token was refused (re-authenticate once)."""
    return isinstance(failure, AuthenticationError) and failure.status == 401 and call.authenticated


async def _wait_to_retry(
    operation: str,
    failure: UpstreamError,
    attempt: int,
    max_attempts: int,
    on_retry: Callable[[retry_policy.RetryNotice], None] | None,
) -> None:
    """Back off (never shorter than Retry-After), telling the caller's listener first."""
    delay = backoff_seconds(attempt, failure.retry_after)
    if on_retry is not None:
        notice = retry_policy.RetryNotice(
            operation=operation,
            failure=failure,
            attempt=attempt,
            max_attempts=max_attempts,
            delay=delay,
            next_try_at=datetime.now(UTC) + timedelta(seconds=delay),
        )
        await _tell(on_retry, notice)
    await asyncio.sleep(delay)


async def _tell(
    on_retry: Callable[[retry_policy.RetryNotice], None], notice: retry_policy.RetryNotice
) -> None:
    """A listener's failure is logged, never the call's: progress shown is not worth a payout."""
    try:
        await sync_to_async(on_retry)(notice)
    except Exception:
        logger.exception("on_retry listener failed for %s", notice.operation)


def quota_refused(answer: Answer, *, patience: float) -> str:
    """
    Why a 429 must fail at once rather than be waited out ("" when it may be waited out): the
    weekly quota is spent, or the upstream asks for a longer wait than this caller's patience.
    A caller never sleeps days on a Retry-After.
    """
    if answer.refusal is Refusal.QUOTA:
        return f"the upstream's weekly quota is spent (Retry-After {answer.wait:.0f}s)"
    if answer.wait > patience:
        return f"the upstream asks to wait {answer.wait:.0f}s, longer than {patience:g}s"
    return ""


async def authenticate(environment: Environment | Target) -> AccessToken:
    """POST /auth with the environment's credentials (no cache: tokens.get_token decides)."""
    target = await _frozen_target(environment)
    body = await request(
        target,
        operation="auth",
        method="POST",
        path="auth",
        json={"client_id": target.client_id, "password": target.password},
        authenticated=False,
    )
    data = body.get("data", body) if isinstance(body, dict) else body
    return AccessToken.model_validate(data)
