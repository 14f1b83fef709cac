"""One upstream request: URL joining, headers, token, shared limiter, safe retries, call log."""

from __future__ import annotations

import asyncio
import json as jsonlib
import logging
import random
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx
from django.conf import settings

from gateway import call_log, connections, limiter, tokens
from gateway.errors import (
    AuthenticationError,
    PermanentError,
    RateLimited,
    UpstreamError,
    UpstreamTimeout,
    error_from_response,
)
from gateway.limiter import Priority
from gateway.models import Environment
from gateway.schemas import AccessToken

logger = logging.getLogger("gateway")


def join_url(api_root: str, path: str, *params: str) -> str:
    """
    `api_root` + "/" + `path`, keeping every segment of the root (the `/sandbox` prefix above all):
    never `urljoin`, which drops the root's path for a path starting with "/". `{}` placeholders
    in `path` are filled with `params`, each percent-encoded as one segment.
    """
    filled = path.format(*(quote(str(p), safe="") for p in params)) if params else path
    return api_root.rstrip("/") + "/" + filled.lstrip("/")


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


async def request(
    environment: Environment,
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
) -> Any:
    """
    Send one logical call and return its parsed JSON body, or raise an UpstreamError. Retried (with
    backoff, on timeouts, 429 and 5xx) only when safe: GETs, /auth, and mutations carrying an
    idempotency key. A 429 is retried for any call: the upstream refused it before handling it,
    so nothing can happen twice. Any 401 of an authenticated call re-authenticates once and
    retries once.
    """
    retry_safe = method == "GET" or not authenticated or idempotency_key is not None
    max_attempts = settings.GATEWAY_MAX_ATTEMPTS if retry_safe else 1
    url = join_url(environment.api_root, path)
    pool_key = f"{environment.pk}:{environment.api_root}"
    reauthenticated = False
    attempt = 0
    while True:
        attempt += 1
        send_headers = {
            "X-Api-Version": settings.GATEWAY_API_VERSION,
            "x-api-key": environment.api_key,
        }
        token = ""
        if authenticated:
            token = await tokens.get_token(environment, authenticate)
            send_headers["Authorization"] = f"Bearer {token}"
        if json is not None:
            send_headers["Content-Type"] = "application/json"
        if idempotency_key:
            send_headers["idempotency-key"] = idempotency_key
        send_headers.update(headers or {})
        content = jsonlib.dumps(json).encode() if json is not None else None

        response: httpx.Response | None = None
        failure: UpstreamError | None = None
        async with limiter.slot(environment, priority):
            started = time.monotonic()
            try:
                response = await connections.send(
                    pool_key,
                    method,
                    url,
                    content=content,
                    params=params,
                    headers=send_headers,
                )
            except httpx.TimeoutException:
                failure = UpstreamTimeout("the upstream did not answer in time", code="timeout")
            except httpx.TransportError as exc:
                # A dropped connection is like a timeout: the request may have taken effect.
                failure = UpstreamTimeout(
                    f"the connection failed ({type(exc).__name__})", code="connection_error"
                )
            duration_ms = int((time.monotonic() - started) * 1000)

        if response is not None:
            await limiter.observe_headers(environment, response.status_code, response.headers)
            if response.is_success:
                failure = None
            else:
                failure = error_from_response(
                    response.status_code,
                    response.text,
                    retry_after=_retry_after(response.headers),
                )
        await call_log.awrite(
            call_log.CallRecord(
                environment_id=environment.pk,
                operation=operation,
                method=method,
                path=url.removeprefix(environment.api_root.rstrip("/")) or "/",
                status=response.status_code if response is not None else None,
                duration_ms=duration_ms,
                attempt=attempt,
                idempotency_key=idempotency_key or "",
                error_code=(failure.code or type(failure).__name__) if failure else "",
                priority=str(priority),
                request_body=json,
                response_body=response.text if response is not None else "",
            )
        )
        status = response.status_code if response is not None else "-"
        logger.info(
            "upstream %s %s %s -> %s in %dms (attempt %d)",
            environment.pk,
            method,
            operation,
            status,
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
        if (
            isinstance(failure, AuthenticationError)
            and failure.status == 401
            and authenticated
            and not reauthenticated
        ):
            reauthenticated = True
            await _forget_token(environment, token)
            continue
        refused_unhandled = isinstance(failure, RateLimited)
        if failure.retryable and (
            attempt < max_attempts
            or (refused_unhandled and attempt < settings.GATEWAY_MAX_ATTEMPTS)
        ):
            await asyncio.sleep(backoff_seconds(attempt, failure.retry_after))
            continue
        raise failure


async def _forget_token(environment: Environment, token: str) -> None:
    from asgiref.sync import sync_to_async

    await sync_to_async(tokens.invalidate)(environment, token=token)


async def authenticate(environment: Environment) -> AccessToken:
    """POST /auth with the environment's credentials (no cache: tokens.get_token decides)."""
    body = await request(
        environment,
        operation="auth",
        method="POST",
        path="auth",
        json={"client_id": environment.client_id, "password": environment.password},
        authenticated=False,
    )
    data = body.get("data", body) if isinstance(body, dict) else body
    return AccessToken.model_validate(data)
