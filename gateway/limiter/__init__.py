"""One rate/concurrency/weekly-budget limiter shared by every process that calls the upstream."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from asgiref.sync import sync_to_async
from django.conf import settings

from gateway.errors import BudgetExhausted
from gateway.limiter.backends import store
from gateway.limiter.policy import (
    Answer,
    Decision,
    LimiterState,
    Limits,
    Priority,
    Refusal,
    cancel,
    decide,
    effective,
    observe,
    release,
    renew,
)

if TYPE_CHECKING:
    from gateway.target import Target

__all__ = [
    "LimiterState",
    "Limits",
    "Priority",
    "Refusal",
    "Slot",
    "acquire",
    "effective",
    "finish",
    "give_back",
    "keep_alive",
    "patience",
    "slot",
    "states",
]


@dataclass(frozen=True)
class Slot:
    environment_id: int
    caller: str
    priority: Priority
    in_flight: int  # our calls in flight when it was granted, this one included


def patience(priority: Priority) -> float:
    """How long a caller of this priority waits for a slot (or for an upstream-imposed pause)."""
    if priority is Priority.STAFF:
        return float(settings.GATEWAY_LIMITER_WAIT)
    return float(settings.GATEWAY_BACKGROUND_LIMITER_WAIT)


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


async def acquire(target: Target, priority: Priority) -> Slot:
    """Wait for a slot; raise BudgetExhausted when the budget is spent or the wait runs out."""
    caller = uuid.uuid4().hex
    wait_at_most = patience(priority)
    deadline = time.monotonic() + wait_at_most
    while True:
        decision = await sync_to_async(_try)(target.environment_id, target.limits, priority, caller)
        if decision.granted:
            return Slot(target.environment_id, caller, priority, decision.in_flight)
        if decision.exhausted:
            raise BudgetExhausted(
                decision.exhausted, code="budget_exhausted", retry_after=decision.wait or None
            )
        if time.monotonic() + decision.wait > deadline:
            await give_back(Slot(target.environment_id, caller, priority, 0))
            raise BudgetExhausted(
                f"no upstream slot within {wait_at_most:g}s (next in about {decision.wait:.0f}s)",
                code="limiter_timeout",
                retry_after=decision.wait,
            )
        # A little jitter so processes woken together don't all retry in the same instant.
        await asyncio.sleep(decision.wait + random.uniform(0, 0.01))  # noqa: S311


def keep_alive(held: Slot) -> None:
    """Renew the lease of a call still in flight (sync: called from the I/O side's thread)."""
    lease = float(settings.GATEWAY_LEASE_SECONDS)
    store().update(
        held.environment_id,
        lambda state: renew(state, caller=held.caller, now=time.time(), lease_seconds=lease),
    )


def finish(
    held: Slot,
    *,
    sent: bool,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    ended_at: float | None = None,
) -> Answer | None:
    """
    End a call in one write: free its slot (after `GATEWAY_LEASE_LINGER`), or give it back
    uncounted when nothing was sent, and learn from the answer's headers. Called when the
    request really ended (an answer, a refused or dropped connection, or the upstream presumed
    done), which after a caller's timeout is later than the caller's own return.
    """
    linger = float(settings.GATEWAY_LEASE_LINGER)
    learn_for = float(settings.GATEWAY_LEARNED_LIMIT_SECONDS)
    answer = Answer.from_headers(status, headers or {}) if status is not None else None

    def change(state: LimiterState) -> None:
        now = time.time()
        end = min(now, ended_at) if ended_at is not None else now
        if not sent:
            cancel(state, caller=held.caller, priority=held.priority)
            return
        release(state, caller=held.caller, now=end, linger=linger)
        if answer is not None:
            observe(state, answer, now=now, in_flight=held.in_flight, learn_for=learn_for)

    store().update(held.environment_id, change)
    return answer


async def give_back(held: Slot) -> None:
    await sync_to_async(finish)(held, sent=False)


@asynccontextmanager
async def slot(target: Target, priority: Priority) -> AsyncIterator[Slot]:
    """A concurrency lease for a block, released even on cancellation."""
    held = await acquire(target, priority)
    try:
        yield held
    finally:
        # Shielded so a cancelled caller still frees its lease; the lease's expiry covers crashes.
        await asyncio.shield(sync_to_async(finish)(held, sent=True))


def states(environment_ids: Iterable[int]) -> dict[int, LimiterState]:
    """The shared state of each environment, read without writing (for the environment page)."""
    return store().read(list(environment_ids))
