"""The emulator's clock: real UTC time plus an offset kept in the database (all processes)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.db.models import F

from emulator.database import EMULATOR_DB
from emulator.models import ClockState

# The offset is read from the database on every call (one primary-key SELECT): a per-process cache
# would let a web process and the emulator disagree right after POST /_control/clock, and would
# survive the rollback of a test transaction.


def _offset_seconds() -> float:
    row = ClockState.objects.filter(pk=1).values_list("offset_seconds", flat=True).first()
    return float(row) if row is not None else 0.0


def real_now() -> datetime:
    return datetime.now(UTC)


def now() -> datetime:
    """The emulator's current time (aware, UTC). Use this everywhere in the emulator."""
    return real_now() + timedelta(seconds=_offset_seconds())


def offset() -> timedelta:
    return timedelta(seconds=_offset_seconds())


def advance(seconds: float) -> datetime:
    """Moves the clock forward by `seconds` (never backwards) and returns the new now()."""
    if seconds < 0:
        raise ValueError("the emulator's clock only moves forward")
    with transaction.atomic(using=EMULATOR_DB):
        ClockState.objects.get_or_create(pk=1)
        ClockState.objects.filter(pk=1).update(offset_seconds=F("offset_seconds") + seconds)
    return now()


def reset() -> None:
    """Back to real time (tests and demos only)."""
    ClockState.objects.update_or_create(pk=1, defaults={"offset_seconds": 0.0})
