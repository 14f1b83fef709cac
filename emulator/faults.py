"""Run-time fault injection: settings stored in one row so the control call and the server agree."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction
from django.db.models import F

from emulator.database import EMULATOR_DB
from emulator.models import FaultSettings


@dataclass(frozen=True)
class Faults:
    latency_ms: int = 0
    error_rate: float = 0.0
    rate_429: float = 0.0
    drop_webhooks: float = 0.0
    drop_response_next: int = 0
    drop_events_next: int = 0
    error_next: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


FIELDS = (
    "latency_ms",
    "error_rate",
    "rate_429",
    "drop_webhooks",
    "drop_response_next",
    "drop_events_next",
    "error_next",
)


def current() -> Faults:
    """The faults in force (webhook delivery reads `drop_webhooks` from here)."""
    row = FaultSettings.objects.filter(pk=1).values(*FIELDS).first()
    return Faults(**row) if row else Faults()


def faults_set(**values: Any) -> Faults:
    """Sets the given fields; the others keep their value."""
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown fault fields: {sorted(unknown)}")
    with transaction.atomic(using=EMULATOR_DB):
        FaultSettings.objects.get_or_create(pk=1)
        if values:
            FaultSettings.objects.filter(pk=1).update(**values)
    return current()


def faults_clear() -> Faults:
    FaultSettings.objects.update_or_create(pk=1, defaults={name: 0 for name in FIELDS})
    return current()


def take_dropped_response() -> bool:
    """Takes one `drop_response_next` credit atomically; True: drop this response."""
    return (
        FaultSettings.objects.filter(pk=1, drop_response_next__gt=0).update(
            drop_response_next=F("drop_response_next") - 1
        )
        == 1
    )


def take_error() -> bool:
    """Takes one `error_next` credit atomically; True: answer this request with a 500."""
    return (
        FaultSettings.objects.filter(pk=1, error_next__gt=0).update(error_next=F("error_next") - 1)
        == 1
    )


def take_dropped_event() -> bool:
    """Takes one `drop_events_next` credit atomically; True: this event is never delivered."""
    return (
        FaultSettings.objects.filter(pk=1, drop_events_next__gt=0).update(
            drop_events_next=F("drop_events_next") - 1
        )
        == 1
    )
