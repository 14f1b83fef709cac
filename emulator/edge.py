"""The emulator's edge, around every API request: limits, RateLimit-* headers and injected faults.

It runs in the ASGI wrapper (emulator.asgi), not in Django, because two of its jobs need the raw
ASGI channel: counting a request as in flight until its last byte is sent, and dropping a response
(the request takes effect, the caller gets no answer)."""

from __future__ import annotations

import asyncio
import json
import logging
import random
from dataclasses import dataclass, field
from typing import Any

import httpx
from asgiref.sync import sync_to_async
from django.db import connections

from emulator import faults
from emulator.clients import client_by_api_key
from emulator.database import EMULATOR_DB
from emulator.limits import LIMITER, Decision, admit
from emulator.models import ApiClient

logger = logging.getLogger(__name__)

Scope = dict[str, Any]
MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# The ApiClient the edge found for the request's x-api-key, so emulator.auth need not look again.
CLIENT_SCOPE_KEY = "payops.emulator.api_client"
_random = random.SystemRandom()


class ResponseDropped(httpx.RemoteProtocolError):
    """Raised to an in-process httpx.ASGITransport caller when a response is dropped: over real
    HTTP the same fault closes the connection, which httpx reports as RemoteProtocolError."""

    def __init__(self) -> None:
        super().__init__("Server disconnected without sending a response.")


@dataclass
class Verdict:
    key: str
    decision: Decision
    client: ApiClient | None = None
    status: int | None = None  # an answer decided here (429 or an injected 500), or None
    body: dict[str, Any] = field(default_factory=dict)
    latency_ms: int = 0
    drop_response: bool = False

    @property
    def admitted(self) -> bool:
        return self.decision.admitted


# What a person opens in a browser, not API calls: the landing page, the health probe, the docs and
# their OpenAPI schemas. With the static files under STATIC_URL (Swagger UI's scripts and styles,
# which a browser fetches several at once) and /_control/, they skip limits and faults: the limits
# model the upstream's API, and the per-peer defaults (2 at once) would refuse the docs page.
UNLIMITED_PATHS = frozenset(
    {"/", "/healthz", "/docs", "/sandbox/docs", "/openapi.json", "/sandbox/openapi.json"}
)


def _static_prefix() -> str:
    from django.conf import settings

    url = str(settings.STATIC_URL or "")
    return "" if "://" in url or not url.strip("/") else "/" + url.strip("/") + "/"


def is_limited_path(path: str) -> bool:
    """Whether a request is an API call, under the limits and faults (everything not above,
    unknown paths included, so they answer JSON with RateLimit headers like the API)."""
    static = _static_prefix()
    if path.startswith("/_control/") or (static and path.startswith(static)):
        return False
    return not (path in UNLIMITED_PATHS or path.rstrip("/") in UNLIMITED_PATHS)


def _is_auth_path(path: str) -> bool:
    return path.rstrip("/") in ("/auth", "/sandbox/auth")


def decide(*, api_key: str | None, peer: str, method: str, path: str) -> Verdict:
    """Sync, runs in a worker thread: database reads and the limiter's bookkeeping."""
    admitted_key: str | None = None
    try:
        client = client_by_api_key(api_key)
        key, decision = admit(client, f"anon:{peer}")
        if decision.admitted:
            admitted_key = key
        current = faults.current()
        verdict = Verdict(key=key, decision=decision, client=client, latency_ms=current.latency_ms)
        if not decision.admitted:
            message = {
                "quota": "weekly request quota exceeded",
                "concurrency": "too many concurrent requests",
            }.get(decision.reason, "rate limit exceeded")
            verdict.status, verdict.body = 429, {"code": "rate_limited", "message": message}
        elif (current.error_next and faults.take_error()) or (
            current.error_rate and _random.random() < current.error_rate
        ):
            verdict.status = 500
            verdict.body = {"code": "internal_error", "message": "internal server error"}
        elif current.rate_429 and _random.random() < current.rate_429:
            verdict.status = 429
            verdict.body = {"code": "rate_limited", "message": "rate limit exceeded"}
            verdict.decision = Decision(True, decision.limit, 0, 1, 1, "fault")
        elif method in MUTATING_METHODS and not _is_auth_path(path):
            verdict.drop_response = faults.take_dropped_response()
        return verdict
    except BaseException:
        if admitted_key is not None:  # the caller never learns of the slot: give it back
            LIMITER.release(admitted_key)
        raise
    finally:
        # This worker thread is not a Django request, so nothing else closes its connection. On
        # PostgreSQL it is a pool slot: give it back. A SQLite connection stays with the thread
        # (the executor's threads are few and reused), which saves a reconnect per request.
        if connections[EMULATOR_DB].vendor != "sqlite":
            connections.close_all()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


async def _send_json(send: Any, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
    payload = json.dumps(body).encode()
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(payload)),
    ]
    raw_headers += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


async def _abort_connection(send: Any) -> None:
    """Closes the connection without an answer (uvicorn), or raises for in-process callers."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is None or not hasattr(transport, "close"):
        raise ResponseDropped()
    transport.close()
    # Let the server see connection_lost, so that it does not try to send a 500 of its own.
    await asyncio.sleep(0)
    await asyncio.sleep(0)


async def handle(scope: Scope, receive: Any, send: Any, app: Any) -> None:
    """Runs one API request through the limits and faults, then Django."""
    peer = (scope.get("client") or ("local", 0))[0]
    verdict: Verdict = await sync_to_async(decide, thread_sensitive=False)(
        api_key=_header(scope, b"x-api-key"),
        peer=str(peer),
        method=scope.get("method", "GET"),
        path=scope.get("path", "/"),
    )
    rate_headers = verdict.decision.headers()
    scope[CLIENT_SCOPE_KEY] = verdict.client
    try:
        if verdict.latency_ms:
            await asyncio.sleep(verdict.latency_ms / 1000)
        if verdict.status is not None:
            await _send_json(send, verdict.status, verdict.body, rate_headers)
            return
        if verdict.drop_response:
            logger.info("fault: dropping the response of %s %s", scope.get("method"), scope["path"])

            async def swallow(message: dict[str, Any]) -> None:
                return None

            await app(scope, receive, swallow)
            await _abort_connection(send)
            return

        extra = [(k.lower().encode(), v.encode()) for k, v in rate_headers.items()]

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await app(scope, receive, send_with_headers)
    finally:
        if verdict.admitted:
            LIMITER.release(verdict.key)
