"""Kept-alive upstream connections: reused across calls, sync bridge and event loops, bounded."""

from __future__ import annotations

import asyncio
import os
import warnings
from typing import Any

from gateway import connections
from gateway.client import call_sync, upstream
from gateway.models import Environment
from tests.gateway.conftest import LiveEmulator


def _ports(emulator: LiveEmulator) -> list[int]:
    return [r["client"][1] for r in emulator.witness.api_requests()]


def test_sync_calls_share_one_kept_alive_connection(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    for _ in range(4):
        assert call_sync(client.quotations.get, quote.quote_id).quote_id == quote.quote_id
    ports = _ports(live_emulator)
    assert len(ports) == 6  # /auth, create, 4 gets
    assert len(set(ports)) == 1, ports


def test_calls_from_different_event_loops_reuse_it_too(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)

    loops: list[asyncio.AbstractEventLoop] = []

    async def two_gets() -> None:
        loops.append(asyncio.get_running_loop())
        for _ in range(2):
            await client.quotations.get(quote.quote_id)

    asyncio.run(two_gets())
    asyncio.run(two_gets())
    assert loops[0] is not loops[1]
    ports = _ports(live_emulator)
    assert len(ports) == 6 and len(set(ports)) == 1, ports


def test_without_reuse_every_call_opens_its_own_connection(
    live_emulator: LiveEmulator, sandbox: Environment, settings: Any
) -> None:
    settings.GATEWAY_CONNECTION_REUSE = False
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    for _ in range(3):
        call_sync(client.quotations.get, quote.quote_id)
    ports = _ports(live_emulator)
    assert len(ports) == 5 and len(set(ports)) == 5, ports


def test_the_pool_is_bounded(live_emulator: LiveEmulator) -> None:
    async def one(key: str) -> int:
        response = await connections.send(
            key, "GET", f"{live_emulator.url}/healthz", content=None, params=None, headers={}
        )
        return response.status_code

    async def many() -> list[int]:
        return [await one(f"bounded-{n}") for n in range(connections._MAX_CLIENTS + 5)]

    assert asyncio.run(many()) == [200] * (connections._MAX_CLIENTS + 5)
    assert connections.pooled() == connections._MAX_CLIENTS


def test_a_dropped_response_costs_its_connection_only(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    live_emulator.faults(drop_response_next=1)
    # A keyed mutation: the dropped answer is retried with the same key on a new connection.
    user = call_sync(
        client.users.create,
        idempotency_key="3f1c3f5e-0d4a-4b59-9a55-0a3f4a3b2c1d",
        email="dropped@example.com",
        phone_number="+15125550100",
        first_name="Dee",
        last_name="Dropped",
        country="US",
    )
    assert user.user_id
    assert call_sync(client.quotations.get, quote.quote_id).quote_id == quote.quote_id
    ports = _ports(live_emulator)
    assert len(set(ports)) == 2, ports  # one connection before the drop, one after
    assert live_emulator.witness.count("/sandbox/v1/users", "POST") == 2


def test_a_forked_worker_gets_its_own_io_loop(live_emulator: LiveEmulator) -> None:
    """django-q2 forks its workers: the parent's I/O thread does not exist in the child."""

    async def health(key: str) -> int:
        response = await connections.send(
            key, "GET", f"{live_emulator.url}/healthz", content=None, params=None, headers={}
        )
        return response.status_code

    assert asyncio.run(health("fork-parent")) == 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a threaded process
        pid = os.fork()
    if pid == 0:  # the child: no database, no atexit handlers of the parent
        try:
            code = 0 if asyncio.run(health("fork-child")) == 200 else 1
        except BaseException:
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert asyncio.run(health("fork-parent")) == 200  # the parent's loop is untouched
