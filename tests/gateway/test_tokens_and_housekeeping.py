"""Token lifetime and renewal, health probe, idempotency keys, call log pruning, leases."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.utils import timezone

from gateway import idempotency, limiter
from gateway.client import call_sync, upstream
from gateway.limiter.backends import DatabaseStore, RedisStore
from gateway.limiter.policy import Priority
from gateway.models import Environment, LimiterRow, UpstreamCall
from gateway.services.token_refresh import refresh_tokens
from gateway.target import resolve
from gateway.tasks import refresh_upstream_tokens
from tests.gateway.conftest import LiveEmulator
from users.models import EndUser


def test_expires_in_is_honoured_minus_margin(
    live_emulator: LiveEmulator, sandbox: Environment, settings: Any
) -> None:
    settings.EMULATOR_TOKEN_TTL_SECONDS = 2  # the emulator runs in this process
    settings.GATEWAY_TOKEN_REFRESH_MARGIN = 300  # larger than the lifetime: half of it is used
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    call_sync(client.quotations.get, quote.quote_id)
    assert live_emulator.witness.count("/sandbox/auth") == 1
    time.sleep(1.1)  # past lifetime - margin (1 s): renewed before the upstream would refuse it
    call_sync(client.quotations.get, quote.quote_id)
    assert live_emulator.witness.count("/sandbox/auth") == 2
    assert 401 not in live_emulator.witness.statuses()


def test_refresh_task_renews_only_what_is_due(
    live_emulator: LiveEmulator, sandbox: Environment, settings: Any
) -> None:
    settings.GATEWAY_TOKEN_REFRESH_MARGIN = 60
    assert refresh_upstream_tokens() == 1  # no token yet: fetched ahead of the first call
    assert call_sync(refresh_tokens, within=60) == 0  # 86400 s left: nothing to do
    assert call_sync(refresh_tokens, within=90_000) == 1  # would expire within the horizon
    assert live_emulator.witness.count("/sandbox/auth") == 2
    call_sync(upstream(sandbox).quotations.create, quote_currency="MXN", amount=100)
    assert live_emulator.witness.count("/sandbox/auth") == 2  # the renewed token is reused


def test_refresh_schedule_is_registered() -> None:
    from console.schedules import SCHEDULES

    spec = SCHEDULES["gateway.refresh_tokens"]
    assert spec.func == "gateway.tasks.refresh_upstream_tokens"


@pytest.mark.django_db
def test_idempotency_key_is_created_with_its_row_and_stable_until_renewed() -> None:
    environment = Environment.objects.create(name="x", kind="sandbox", base_url="http://up.test")
    row = EndUser.objects.create(environment=environment, email="a@example.com")
    first = row.idempotency_key
    assert first is not None
    assert EndUser.objects.get(pk=row.pk).idempotency_key == first
    other = EndUser.objects.create(environment=environment, email="b@example.com")
    assert other.idempotency_key != first
    renewed = idempotency.renew(row)
    assert renewed != first
    assert EndUser.objects.get(pk=row.pk).idempotency_key == renewed
    with pytest.raises(IntegrityError), transaction.atomic():
        EndUser.objects.filter(pk=other.pk).update(idempotency_key=renewed)


@pytest.mark.django_db
def test_prune_command_keeps_recent_rows(settings: Any) -> None:
    settings.GATEWAY_CALL_LOG_RETENTION_DAYS = 30
    old = UpstreamCall.objects.create(method="GET", path="/old")
    UpstreamCall.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))
    UpstreamCall.objects.create(method="GET", path="/new")
    call_command("gateway_prune_calls")
    assert list(UpstreamCall.objects.values_list("path", flat=True)) == ["/new"]


@pytest.mark.django_db(transaction=True)
async def test_a_cancelled_call_frees_its_concurrency_slot(settings: Any) -> None:
    settings.GATEWAY_LEASE_LINGER = 0
    environment = await Environment.objects.acreate(
        name="y", kind="sandbox", base_url="http://up.test", max_concurrent=1
    )
    entered = asyncio.Event()

    async def hold() -> None:
        async with limiter.slot(resolve(environment), Priority.STAFF):
            entered.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(hold())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    state = (await sync_to_async(limiter.states)([environment.pk]))[environment.pk]
    assert state.leases == {}
    settings.GATEWAY_LIMITER_WAIT = 1
    async with limiter.slot(resolve(environment), Priority.STAFF):
        pass


def _hammer_store(store: Any, environment_id: int) -> int:
    def bump(state: Any) -> None:
        state.week_count += 1

    threads = [
        threading.Thread(target=lambda: [store.update(environment_id, bump) for _ in range(25)])
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return int(store.update(environment_id, lambda state: state.week_count))


@pytest.mark.django_db(transaction=True)
def test_database_store_loses_no_update() -> None:
    environment = Environment.objects.create(name="z", kind="sandbox", base_url="http://up.test")
    assert _hammer_store(DatabaseStore(), environment.pk) == 100
    assert LimiterRow.objects.get(environment=environment).state["week_count"] == 100


@pytest.mark.redis
def test_redis_store_loses_no_update(settings: Any) -> None:
    store = RedisStore(settings.REDIS_URL)
    store.client.delete(RedisStore.key(987654))
    assert _hammer_store(store, 987654) == 100


def test_callers_queued_through_an_expiry_send_the_new_token(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    quote = call_sync(client.quotations.create, quote_currency="MXN", amount=100)
    # The upstream's clock jumps past the token's lifetime; our cache still believes in it.
    live_emulator.advance(2 * 86400)
    live_emulator.witness.clear()

    async def eight_callers() -> None:
        await asyncio.gather(*(client.quotations.get(quote.quote_id) for _ in range(8)))

    async_to_sync(eight_callers)()
    refused = live_emulator.witness.count("/sandbox/v1/quotations/" + quote.quote_id)
    stale = [r for r in live_emulator.witness.api_requests() if r["status"] == 401]
    # Only the calls already holding a slot when the token died (2 at once) send it; the six
    # queued behind them read the cache when their slot comes and find the new token.
    assert len(stale) <= 2, len(stale)
    assert live_emulator.witness.count("/sandbox/auth") == 1
    assert refused == 8 + len(stale)
