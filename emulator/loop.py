"""Periodic jobs run by the emulator's lifespan loop every EMULATOR_LOOP_INTERVAL seconds."""

from __future__ import annotations

from collections.abc import Callable

from emulator.domain.tick import tick_job
from emulator.domain.webhooks import delivery_tick
from emulator.limits import flush_weekly_usage

# Sync functions without arguments; each runs in a worker thread, and an exception is logged
# without stopping the loop: weekly usage flush, the domain tick, webhook delivery.
PERIODIC_JOBS: list[Callable[[], None]] = [flush_weekly_usage, tick_job, delivery_tick]
