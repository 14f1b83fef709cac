"""Helpers of the emulator tests: moving the emulator clock to a known instant."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from emulator import clock

NEW_YORK = ZoneInfo("America/New_York")


def next_business_noon_new_york(after: datetime) -> datetime:
    """The next weekday 12:00 in New York strictly after `after` (no penalty markup then)."""
    local = after.astimezone(NEW_YORK)
    candidate = local.replace(hour=12, minute=0, second=0, microsecond=0)
    if candidate <= local:
        candidate += timedelta(days=1)
    while candidate.weekday() >= 5:
        candidate += timedelta(days=1)
    return candidate


def next_saturday_noon_new_york(after: datetime) -> datetime:
    local = after.astimezone(NEW_YORK)
    candidate = local.replace(hour=12, minute=0, second=0, microsecond=0) + timedelta(days=1)
    while candidate.weekday() != 5:
        candidate += timedelta(days=1)
    return candidate


def move_clock_to(target: datetime) -> datetime:
    """Advances the emulator clock so that now() is `target` (plus the few ms this call takes)."""
    return clock.advance((target - clock.now()).total_seconds())


def move_clock_to_business_hours() -> datetime:
    return move_clock_to(next_business_noon_new_york(clock.now()))
