"""Gateway test fixtures: a REAL emulator over HTTP (uvicorn on a free port) with a witness."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.utils import timezone

from gateway.models import Environment, EnvironmentKind
from tests.servers import serve_in_thread

CONTROL_HEADERS = {"X-Emulator-Token": "test-emulator-token"}


@dataclass
class Witness:
    """What the emulator saw, recorded outside our code: each API request's path, times, status."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    # Every request as it ARRIVES (the others are recorded when answered): to see one in flight.
    arrivals: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def arrived(self, path_suffix: str, method: str | None = None) -> int:
        with self.lock:
            return sum(
                1
                for r in self.arrivals
                if r["path"].endswith(path_suffix) and (method is None or r["method"] == method)
            )

    def count(self, path_suffix: str, method: str | None = None) -> int:
        with self.lock:
            return sum(
                1
                for r in self.requests
                if r["path"].endswith(path_suffix) and (method is None or r["method"] == method)
            )

    def statuses(self) -> list[int]:
        with self.lock:
            return [r["status"] for r in self.requests if r["path"] != "/healthz"]

    def api_requests(self) -> list[dict[str, Any]]:
        with self.lock:
            return [
                r
                for r in self.requests
                if not r["path"].startswith("/_control") and r["path"] != "/healthz"
            ]

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()
            self.arrivals.clear()


class _SpySend:
    """Records the status; exposes the server's transport as the emulator expects of `send`
    (it closes the connection itself to drop a response)."""

    def __init__(self, send: Any, record: dict[str, Any], witness: Witness) -> None:
        self._send, self._record, self._witness = send, record, witness
        self.transport = getattr(getattr(send, "__self__", None), "transport", None)

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self._record["status"] = message["status"]
            # Recorded before the caller can see the answer, so a test never races the witness.
            self._witness_add(self._record)
        elif message["type"] == "http.response.body" and self._record.get("status") == 429:
            self._record["body"] = message.get("body", b"")[:200]
        await self._send(message)

    def _witness_add(self, record: dict[str, Any]) -> None:
        with self._witness.lock:
            if not record.get("witnessed"):
                record["witnessed"] = True
                self._witness.requests.append(record)


class WitnessApp:
    """ASGI wrapper around the emulator that records every request it answers."""

    def __init__(self, app: Any, witness: Witness) -> None:
        self.app, self.witness = app, witness

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        record: dict[str, Any] = {
            "method": scope["method"],
            "path": scope["path"],
            "start": time.monotonic(),
            "status": None,
            # (host, port) of the caller's TCP connection: the same port means a reused one.
            "client": tuple(scope.get("client") or ()),
            "headers": {k.decode().lower(): v.decode() for k, v in scope.get("headers") or []},
        }

        with self.witness.lock:
            self.witness.arrivals.append(record)
        spy = _SpySend(send, record, self.witness)
        try:
            await self.app(scope, receive, spy.send)
        finally:
            record["end"] = time.monotonic()
            spy._witness_add(record)  # a dropped response never started one


@dataclass
class LiveEmulator:
    url: str
    witness: Witness

    def control(self, method: str, path: str, **kwargs: Any) -> Any:
        response = httpx.request(
            method, f"{self.url}/_control/{path}", headers=CONTROL_HEADERS, timeout=10, **kwargs
        )
        response.raise_for_status()
        return response.json()

    def new_client(self, **limits: Any) -> dict[str, str]:
        return self.control("POST", "clients", json={"name": "gateway-test", **limits})

    def faults(self, **faults: Any) -> None:
        self.control("POST", "faults", json=faults)

    def advance(self, seconds: float) -> None:
        self.control("POST", "clock", json={"advance_seconds": seconds})

    def to_business_hours(self) -> None:
        """The emulator's clock to the next weekday noon in New York (no penalty markup), for
        tests that check exact figures whatever the hour they run at (decisions.md)."""
        from tests.emulator.conftest import business_hours_seconds

        self.advance(business_hours_seconds(self.control("GET", "clock")["now"]))


@pytest.fixture
def live_emulator(transactional_db: None) -> Iterator[LiveEmulator]:
    """The emulator's ASGI app served by uvicorn in a thread, over real HTTP, on a free port."""
    from django.core.cache import cache

    from emulator import limits
    from emulator.asgi import application

    limits.LIMITER.reset()
    cache.clear()
    witness = Witness()
    with serve_in_thread(WitnessApp(application, witness), lifespan="off") as url:
        try:
            yield LiveEmulator(url=url, witness=witness)
        finally:
            with contextlib.suppress(httpx.HTTPError):
                httpx.delete(f"{url}/_control/faults", headers=CONTROL_HEADERS, timeout=5)


@pytest.fixture(autouse=True)
def _fresh_shared_state(settings: Any) -> Iterator[None]:
    """Redis (this helper's own index) keeps limiter state between runs: start each test clean."""
    settings.GATEWAY_BACKOFF_BASE = 0.05
    settings.GATEWAY_BACKOFF_MAX = 0.5
    if settings.REDIS_URL:
        import redis

        redis.Redis.from_url(settings.REDIS_URL).flushdb()
    yield


def make_environment(
    emulator: LiveEmulator,
    *,
    name: str = "Emulator sandbox",
    kind: str = EnvironmentKind.SANDBOX,
    **limits: Any,
) -> Environment:
    credentials = emulator.new_client(**{k: v for k, v in limits.items() if k != "weekly_budget"})
    environment = Environment(
        name=name,
        kind=kind,
        base_url=emulator.url,
        rate_per_second=limits.get("rate_per_second", 10),
        max_concurrent=limits.get("max_concurrent", 2),
        weekly_budget=limits.get("weekly_budget", 10_000),
    )
    environment.set_credentials(
        client_id=credentials["client_id"],
        password=credentials["password"],
        api_key=credentials["api_key"],
    )
    # Issued by the emulator just now, as the dev bootstrap does: staff may switch to it.
    environment.verified_at = timezone.now()
    environment.save()
    return environment


@pytest.fixture
def sandbox(live_emulator: LiveEmulator) -> Environment:
    return make_environment(live_emulator)


def child_environment() -> dict[str, str]:
    """Environment variables for a child process that must use this test run's database."""
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    env["G1_CHILD_DB_NAME"] = str(settings.DATABASES["default"]["NAME"])
    env["PYTHONPATH"] = str(settings.BASE_DIR)
    return env
