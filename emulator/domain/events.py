"""Emits upstream events: stores each with its `evt_<uuid>` id and queues its webhook delivery."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.db import transaction

from emulator import clock, faults
from emulator.database import EMULATOR_DB
from emulator.models import (
    ApiClient,
    EmulatedUser,
    Payout,
    VirtualAccount,
    WebhookDelivery,
    WebhookEvent,
    WebhookRegistration,
)


def js_stringify(value: Any) -> str:
    """What JavaScript's JSON.stringify gives: no spaces, non-ASCII kept, key order kept."""
    return json.dumps(
        _js_numbers(value), separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def _js_numbers(value: Any) -> Any:
    # JSON.stringify writes 1.0 as 1: integral floats become ints.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _js_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_js_numbers(item) for item in value]
    return value


def new_event_id() -> str:
    return f"evt_{uuid.uuid4()}"


def emit(*, client: ApiClient, environment: str, event: str, data: dict[str, Any]) -> WebhookEvent:
    """Stores the event and queues its delivery, inside the caller's transaction.

    `event_id` is put first in `data` (kept when the caller supplies one). Without a registered
    webhook the event is stored but nothing is queued: the upstream has nowhere to send it.
    """
    payload = {"event_id": data.get("event_id") or new_event_id()}
    payload.update({key: value for key, value in data.items() if key != "event_id"})
    now = clock.now()
    with transaction.atomic(using=EMULATOR_DB):
        stored = WebhookEvent.objects.create(
            event_id=payload["event_id"],
            client=client,
            environment=environment,
            event=event,
            data=payload,
            body=js_stringify({"event": event, "data": payload}),
            created_at=now,
        )
        registration = WebhookRegistration.objects.filter(
            client=client, environment=environment
        ).first()
        if registration is not None and not faults.take_dropped_event():
            WebhookDelivery.objects.create(
                event=stored,
                registration=registration,
                signing_secret=registration.secret,
                queued_at=now,
                next_attempt_at=now,
            )
    return stored


def emit_about(
    record: EmulatedUser | VirtualAccount | Payout, event: str, data: dict[str, Any]
) -> WebhookEvent:
    """`emit` to the client and in the environment that own `record`."""
    return emit(client=record.client, environment=record.environment, event=event, data=data)
