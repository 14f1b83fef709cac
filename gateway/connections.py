"""Kept-alive upstream connections: one httpx.AsyncClient per (process, environment), reused."""

from __future__ import annotations

import asyncio
import atexit
import os
import ssl
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Mapping
from functools import cache
from typing import Any

import httpx
from django.conf import settings

# Why one private I/O loop rather than a client per caller's loop: the sync bridge
# (async_to_sync) runs every call in a brand-new event loop, so a pool keyed by the running loop
# would never be reused there, and a client must not outlive the loop its sockets belong to.
# The request itself is handed to one long-lived loop thread per process, which owns every
# client; the caller's loop only awaits the answer, so tokens, limiter and call log keep running
# where they did (in the caller's thread and transaction).

_MAX_CLIENTS = 16  # bounded: environments come and go (tests start an emulator per test)


class _IoLoop:
    """The process's one loop thread for upstream I/O, with its bounded cache of clients."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.clients: OrderedDict[str, httpx.AsyncClient] = OrderedDict()
        self.thread = threading.Thread(target=self.loop.run_forever, name="gateway-io", daemon=True)
        self.thread.start()

    def client(self, key: str) -> httpx.AsyncClient:
        """Only called on the I/O loop's own thread, so the cache needs no lock."""
        client = self.clients.get(key)
        if client is None:
            keepalive = float(getattr(settings, "GATEWAY_KEEPALIVE_EXPIRY", 4.0))
            client = httpx.AsyncClient(
                verify=_ssl_context(),
                limits=httpx.Limits(keepalive_expiry=keepalive),
            )
            self.clients[key] = client
            while len(self.clients) > _MAX_CLIENTS:
                _, evicted = self.clients.popitem(last=False)
                self.loop.create_task(evicted.aclose())
        else:
            self.clients.move_to_end(key)
        return client

    def run(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def close(self) -> None:
        async def close_all() -> None:
            for client in list(self.clients.values()):
                await client.aclose()
            self.clients.clear()

        if self.loop.is_running():
            asyncio.run_coroutine_threadsafe(close_all(), self.loop).result(timeout=5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)


_io: _IoLoop | None = None
_io_lock = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked worker (django-q2) gets no threads: forget the parent's loop and lock."""
    global _io, _io_lock
    _io, _io_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _io_loop() -> _IoLoop:
    """The I/O loop of this process (a forked child starts its own: threads do not survive)."""
    global _io
    with _io_lock:
        if _io is None or _io.pid != os.getpid() or not _io.thread.is_alive():
            _io = _IoLoop()
        return _io


@atexit.register
def close() -> None:
    """Close every kept-alive connection (process exit; tests may call it too)."""
    global _io
    with _io_lock:
        current, _io = _io, None
    if current is not None and current.pid == os.getpid():
        current.close()


@cache
def _ssl_context() -> ssl.SSLContext:
    """Built once: loading the CA bundle for every client would cost more than the request."""
    return ssl.create_default_context()


def pooled() -> int:
    """How many kept-alive clients this process holds (bounded by _MAX_CLIENTS)."""
    return len(_io.clients) if _io is not None and _io.pid == os.getpid() else 0


def timeout() -> httpx.Timeout:
    return httpx.Timeout(settings.GATEWAY_READ_TIMEOUT, connect=settings.GATEWAY_CONNECT_TIMEOUT)


async def send(
    pool_key: str,
    method: str,
    url: str,
    *,
    content: bytes | None,
    params: Mapping[str, Any] | None,
    headers: Mapping[str, str],
) -> httpx.Response:
    """
    Send one HTTP request on the kept-alive client of `pool_key` (an environment's API root and
    id) and return the fully read response. Cancelling the caller cancels the request.
    With `GATEWAY_CONNECTION_REUSE = False` every request opens its own client, as before.
    """
    request_timeout = timeout()
    if not getattr(settings, "GATEWAY_CONNECTION_REUSE", True):
        async with httpx.AsyncClient(timeout=request_timeout, verify=_ssl_context()) as client:
            return await client.request(
                method, url, content=content, params=params, headers=headers
            )
    io = _io_loop()

    async def on_io_loop() -> httpx.Response:
        return await io.client(pool_key).request(
            method, url, content=content, params=params, headers=headers, timeout=request_timeout
        )

    return await io.run(on_io_loop())
