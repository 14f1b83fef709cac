"""One upstream request: headers, token, shared limiter, safe retries, call log, learned limits."""

from __future__ import annotations

import asyncio
import functools
import json as jsonlib
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

from gateway import call_log, connections, limiter, retry_policy, tokens
from gateway.errors import (
    AuthenticationError,
    BudgetExhausted,
    CalledInTransaction,
    PermanentError,
    UpstreamError,
    UpstreamTimeout,
    error_from_response,
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


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


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


@dataclass
class _Attempt:
    """One attempt's bookkeeping, ended once: by the caller, or after it left (a late answer)."""

    held: limiter.Slot
    row_id: int | None
    started: float

    def end(
        self, response: httpx.Response | None, error: BaseException | None
    ) -> tuple[Answer | None, int, UpstreamError | None]:
        """Free the slot (learning from the answer), complete the call-log row, name the failure."""
        duration_ms = int((time.monotonic() - self.started) * 1000)
        failure = _failure(response, error)
        not_sent = isinstance(error, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
        answer = limiter.finish(
            self.held,
            sent=not not_sent,
            # When the answer arrived, not when this bookkeeping got the store's lock.
            ended_at=response.extensions.get(connections.ANSWERED_AT) if response else None,
            status=response.status_code if response is not None else None,
            headers=response.headers if response is not None else None,
        )
        call_log.close_row(
            self.row_id,
            status=response.status_code if response is not None else None,
            duration_ms=duration_ms,
            error_code=(failure.code or type(failure).__name__) if failure else "",
            response_body=response.text if response is not None else "",
        )
        return answer, duration_ms, failure


def _failure(response: httpx.Response | None, error: BaseException | None) -> UpstreamError | None:
    if response is not None:
        if response.is_success:
            return None
        return error_from_response(
            response.status_code, response.text, retry_after=_retry_after(response.headers)
        )
    if isinstance(error, httpx.TimeoutException):
        return UpstreamTimeout("the upstream did not answer in time", code="timeout")
    # A dropped connection is like a timeout: the request may have taken effect.
    return UpstreamTimeout(
        f"the connection failed ({type(error).__name__})", code="connection_error"
    )


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
    if isinstance(environment, Target):
        target = environment
    else:
        target = await sync_to_async(_prepare)(environment)
    max_attempts = int(settings.GATEWAY_MAX_ATTEMPTS)
    url = target.url(path)
    log_path = "/" + path.lstrip("/")
    content = jsonlib.dumps(json).encode() if json is not None else None
    reauthenticated = False
    attempt = 0
    while True:
        attempt += 1
        # The row is committed before the request (and before the wait for a slot, which keeps
        # the write out of the slot's time: the rate window counts from each call's end).
        row_id = await sync_to_async(call_log.open_row)(
            call_log.CallRecord(
                environment_id=target.environment_id,
                operation=operation,
                method=method,
                path=log_path,
                attempt=attempt,
                idempotency_key=idempotency_key or "",
                priority=str(priority),
                request_body=json,
            )
        )
        try:
            held = await limiter.acquire(target, priority)
        except BaseException:
            await asyncio.shield(sync_to_async(call_log.drop_row)(row_id))  # nothing was sent
            raise
        token = ""
        if authenticated:
            # The token is read when the slot is granted, never before the wait: a caller that
            # queued through a refresh sends the new token, not the one it saw before waiting.
            cached = await tokens.current(target)
            if cached is None:
                # /auth needs a slot of its own: give this one back while the token is fetched.
                await limiter.give_back(held)
                try:
                    fresh = await tokens.get_token(target, authenticate)
                    held = await limiter.acquire(target, priority)
                except BaseException:
                    await asyncio.shield(sync_to_async(call_log.drop_row)(row_id))
                    raise
                cached = await tokens.current(target) or fresh
            token = cached
        send_headers = {"X-Api-Version": settings.GATEWAY_API_VERSION, "x-api-key": target.api_key}
        if token:
            send_headers["Authorization"] = f"Bearer {token}"
        if json is not None:
            send_headers["Content-Type"] = "application/json"
        if idempotency_key:
            send_headers["idempotency-key"] = idempotency_key
        send_headers.update(headers or {})

        this = _Attempt(held, row_id, time.monotonic())
        response: httpx.Response | None = None
        error: BaseException | None = None
        try:
            response = await connections.send(
                target.pool_key,
                method,
                url,
                content=content,
                params=params,
                headers=send_headers,
                renew=functools.partial(limiter.keep_alive, held),
                on_late=this.end,
            )
        except httpx.TransportError as exc:
            error = exc
        answer: Answer | None = None
        failure: UpstreamError | None
        if isinstance(error, connections.LeftInFlight):
            # The caller's wait ran out but the request lives on: `end` runs when it really ends,
            # and until then the slot stays taken (the upstream still counts the request).
            duration_ms = int((time.monotonic() - this.started) * 1000)
            failure = _failure(None, error)
        else:
            answer, duration_ms, failure = await asyncio.shield(
                sync_to_async(this.end)(response, error)
            )
        logger.info(
            "upstream %s %s %s -> %s in %dms (attempt %d)",
            target.environment_id,
            method,
            operation,
            response.status_code if response is not None else "-",
            duration_ms,
            attempt,
        )

        if failure is None and response is not None:
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
        assert failure is not None
        if answer is not None and answer.refusal is not Refusal.NONE:
            give_up = quota_refused(answer, patience=limiter.patience(priority))
            if give_up:
                raise BudgetExhausted(
                    give_up, status=429, code="budget_exhausted", retry_after=answer.wait
                )
        if (
            isinstance(failure, AuthenticationError)
            and failure.status == 401
            and authenticated
            and not reauthenticated
        ):
            reauthenticated = True
            await tokens.invalidate(target, token=token)
            continue
        failure.attempts = attempt
        keyed = idempotency_key is not None
        if retry_policy.may_retry(
            operation=operation,
            method=method,
            keyed=keyed,
            failure=failure,
            attempt=attempt,
            max_attempts=max_attempts,
        ):
            await _wait_to_retry(operation, failure, attempt, max_attempts, on_retry)
            continue
        raise failure


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
    if isinstance(environment, Target):
        target = environment
    else:
        target = await sync_to_async(_prepare)(environment)
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
