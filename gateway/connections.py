"""Kept-alive upstream connections: one httpx.AsyncClient per (process, environment), reused."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Iterator, Mapping
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

logger = logging.getLogger("gateway")

# Set on every response: the wall-clock time its answer arrived (the limiter stamps calls with it).
ANSWERED_AT = "payops.answered_at"

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

    def run[T](self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

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

# URL prefix -> the transport that answers it in this process (see `routed`).
_routes: dict[str, httpx.AsyncBaseTransport] = {}
_routes_lock = threading.Lock()


@contextlib.contextmanager
def routed(url_prefix: str, transport: httpx.AsyncBaseTransport) -> Iterator[None]:
    """
    While the block runs, requests to URLs under `url_prefix` go through `transport` (in this
    process) instead of the network; everything else about the call (token, limiter, retries,
    call log) is unchanged. For the dev bootstrap, which reaches the emulator's ASGI application
    mounted in-process before any emulator server is listening; production code never routes.
    """
    prefix = url_prefix.rstrip("/") + "/"
    with _routes_lock:
        _routes[prefix] = transport
    try:
        yield
    finally:
        with _routes_lock:
            _routes.pop(prefix, None)


def _route_for(url: str) -> httpx.AsyncBaseTransport | None:
    with _routes_lock:
        return next((t for prefix, t in _routes.items() if url.startswith(prefix)), None)


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


def _close_db_after(work: Callable[[], None]) -> None:
    """Run bookkeeping in a thread of its own, giving back the database connection it opened."""
    from django.db import connections as databases

    try:
        work()
    except Exception:
        logger.exception("gateway bookkeeping failed in the background")
    finally:
        databases.close_all()


class LeftInFlight(httpx.ReadTimeout):
    """The caller stopped waiting; the request is still in flight and `on_late` will end it."""


async def _renewing(renew: Callable[[], None]) -> None:
    interval = max(0.05, float(settings.GATEWAY_LEASE_SECONDS) / 3)
    while True:
        await asyncio.sleep(interval)
        await asyncio.to_thread(_close_db_after, renew)


async def send(
    pool_key: str,
    method: str,
    url: str,
    *,
    content: bytes | None,
    params: Mapping[str, Any] | None,
    headers: Mapping[str, str],
    renew: Callable[[], None] | None = None,
    on_late: Callable[[httpx.Response | None, BaseException | None], object] | None = None,
) -> httpx.Response:
    """
    Send one HTTP request on the kept-alive client of `pool_key` (an environment's API root and
    id) and return the fully read response, or raise the transport error.

    The caller waits at most `GATEWAY_READ_TIMEOUT` (then httpx.ReadTimeout). The request itself
    is not abandoned then: the upstream is still working on it and counts it in flight, so it lives
    on on the I/O loop until the upstream answers or `GATEWAY_UPSTREAM_MAX_SECONDS` have passed
    since it was sent (then it is presumed done). While it lives, `renew()` runs every third of
    `GATEWAY_LEASE_SECONDS`; when it ends after the caller left (a timeout or a cancellation),
    `on_late(response, error)` runs once in a thread of its own, to free the slot then and log
    the late answer. `GATEWAY_CONNECTION_REUSE = False` opens a client per request instead.
    """
    io = _io_loop()
    reuse = getattr(settings, "GATEWAY_CONNECTION_REUSE", True)
    client_key = pool_key if reuse else None
    arguments: dict[str, Any] = {"content": content, "params": params, "headers": headers}
    future = io.run(_request_on_io_loop(io, client_key, method, url, arguments, renew))
    return await _await_answer(future, on_late)


async def _request_on_io_loop(
    io: _IoLoop,
    client_key: str | None,
    method: str,
    url: str,
    arguments: dict[str, Any],
    renew: Callable[[], None] | None,
) -> httpx.Response:
    """
    The request itself, run on the I/O loop, renewing the lease while it lives: through a routed
    transport, on the kept-alive client of `client_key`, or (None) on a client of its own.
    """
    renewer = asyncio.create_task(_renewing(renew)) if renew is not None else None
    request_timeout = httpx.Timeout(
        float(settings.GATEWAY_UPSTREAM_MAX_SECONDS), connect=settings.GATEWAY_CONNECT_TIMEOUT
    )
    try:
        mounted = _route_for(url)
        if mounted is not None:
            async with httpx.AsyncClient(transport=mounted, timeout=request_timeout) as own:
                response = await own.request(method, url, **arguments)
        elif client_key is not None:
            client = io.client(client_key)
            response = await client.request(method, url, timeout=request_timeout, **arguments)
        else:
            async with httpx.AsyncClient(timeout=request_timeout, verify=_ssl_context()) as own:
                response = await own.request(method, url, **arguments)
        response.extensions[ANSWERED_AT] = time.time()
        return response
    finally:
        if renewer is not None:
            renewer.cancel()


async def _await_answer(
    future: concurrent.futures.Future[httpx.Response],
    on_late: Callable[[httpx.Response | None, BaseException | None], object] | None,
) -> httpx.Response:
    """
    Wait (on the caller's loop) at most GATEWAY_READ_TIMEOUT for the I/O loop's answer. A caller
    that stops waiting (timeout or cancellation) hands the request's end over to `on_late`.
    """
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()

    def wake(_: concurrent.futures.Future[Any]) -> None:
        def settle() -> None:
            if not waiter.done():
                waiter.set_result(None)

        # The caller's loop may be gone (its call_sync returned after a timeout): nothing to wake.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle)

    future.add_done_callback(wake)
    try:
        await asyncio.wait_for(waiter, float(settings.GATEWAY_READ_TIMEOUT))
    except (TimeoutError, asyncio.CancelledError) as left:
        if on_late is not None:
            future.add_done_callback(lambda done: _hand_over(done, on_late))
        if isinstance(left, asyncio.CancelledError):
            raise
        raise LeftInFlight(
            f"no answer within {settings.GATEWAY_READ_TIMEOUT:g}s (the request lives on)"
        ) from None
    return future.result()


def _hand_over(
    done: concurrent.futures.Future[Any],
    on_late: Callable[[httpx.Response | None, BaseException | None], object],
) -> None:
    response: httpx.Response | None = None
    error: BaseException | None = None
    try:
        response = done.result()
    except BaseException as exc:
        error = exc

    threading.Thread(
        target=_close_db_after,
        args=(lambda: on_late(response, error),),
        name="gateway-late-answer",
        daemon=True,
    ).start()
