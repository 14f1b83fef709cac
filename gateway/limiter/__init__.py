"""One rate/concurrency/weekly-budget limiter shared by every process that calls the upstream."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.conf import settings

from gateway.errors import BudgetExhausted
from gateway.limiter.backends import store
from gateway.limiter.policy import Decision, LimiterState, Limits, Priority, decide, pause, release
from gateway.models import Environment

__all__ = [
    "LimiterState",
    "Limits",
    "Priority",
    "Slot",
    "acquire",
    "limits_for",
    "observe_headers",
    "slot",
    "usage",
]


def limits_for(environment: Environment) -> Limits:
    return Limits(
        rate_per_second=int(environment.rate_per_second),
        max_concurrent=int(environment.max_concurrent),
        weekly_budget=int(environment.weekly_budget),
        background_share=float(str(environment.background_share)),
        window_margin=float(settings.GATEWAY_RATE_WINDOW_MARGIN),
    )


@dataclass(frozen=True)
class Slot:
    environment_id: int
    caller: str


def _try(environment_id: int, limits: Limits, priority: Priority, caller: str) -> Decision:
    lease = float(settings.GATEWAY_LEASE_SECONDS)
    return store().update(
        environment_id,
        lambda state: decide(
            state,
            now=time.time(),
            limits=limits,
            priority=priority,
            caller=caller,
            lease_seconds=lease,
        ),
    )


def _release(environment_id: int, caller: str) -> None:
    linger = float(settings.GATEWAY_LEASE_LINGER)
    store().update(
        environment_id,
        lambda state: release(state, caller=caller, now=time.time(), linger=linger),
    )


async def acquire(environment: Environment, priority: Priority) -> Slot:
    """Wait for a slot; raise BudgetExhausted when the budget is spent or the wait runs out."""
    limits = limits_for(environment)
    caller = uuid.uuid4().hex
    patience = (
        settings.GATEWAY_LIMITER_WAIT
        if priority is Priority.STAFF
        else settings.GATEWAY_BACKGROUND_LIMITER_WAIT
    )
    deadline = time.monotonic() + float(patience)
    while True:
        decision = await sync_to_async(_try)(environment.pk, limits, priority, caller)
        if decision.granted:
            return Slot(environment.pk, caller)
        if decision.exhausted:
            raise BudgetExhausted(decision.exhausted, code="budget_exhausted")
        if time.monotonic() + decision.wait > deadline:
            await sync_to_async(_release)(environment.pk, caller)
            raise BudgetExhausted(
                f"no upstream slot within {patience:g}s (next in about {decision.wait:.0f}s)",
                code="limiter_timeout",
                retry_after=decision.wait,
            )
        # A little jitter so processes woken together don't all retry in the same instant.
        await asyncio.sleep(decision.wait + random.uniform(0, 0.01))  # noqa: S311


async def give_back(slot_: Slot) -> None:
    await sync_to_async(_release)(slot_.environment_id, slot_.caller)


@asynccontextmanager
async def slot(environment: Environment, priority: Priority) -> AsyncIterator[Slot]:
    """A concurrency lease for one upstream request, released even on cancellation."""
    held = await acquire(environment, priority)
    try:
        yield held
    finally:
        # Shielded so a cancelled caller still frees its lease; the lease's expiry covers crashes.
        await asyncio.shield(give_back(held))


def _header_float(headers: Mapping[str, str], name: str) -> float | None:
    value = headers.get(name)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def pause_seconds(status: int, headers: Mapping[str, str]) -> float:
    """How long every process must hold off, per the upstream's own headers (they are the truth)."""
    wait = 0.0
    if status == 429:
        wait = _header_float(headers, "retry-after") or 1.0
    remaining = _header_float(headers, "ratelimit-remaining")
    reset = _header_float(headers, "ratelimit-reset")
    # Remaining 0 over a window longer than a second (the weekly quota) pauses everyone until
    # Reset. Within the per-second window our own sliding log already holds the same line, and
    # the upstream rounds that Reset up to a whole second, so pausing on it would halve the rate.
    if remaining is not None and remaining <= 0 and reset is not None and reset > 1:
        wait = max(wait, reset)
    return wait


async def observe_headers(
    environment: Environment, status: int, headers: Mapping[str, str]
) -> float:
    """Record an upstream-imposed pause for all processes; returns its length in seconds."""
    wait = pause_seconds(status, headers)
    if wait > 0:
        until = time.time() + wait

        def _pause(state: LimiterState) -> None:
            pause(state, until=until)

        await sync_to_async(store().update)(environment.pk, _pause)
    return wait


def usage(environment: Environment) -> LimiterState:
    """The current shared state (weekly counts etc.), for the quota gauge."""
    return store().update(environment.pk, lambda state: LimiterState(**state.to_dict()))
