"""Push small "something changed" events to staff browsers over the channel layer (after commit)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

# Every connected staff member listens on this group; per-role groups add a suffix.
STAFF_EVENTS_GROUP = "staff.events"


def role_group(role_key: str) -> str:
    """The group of staff holding one role (group names allow only ASCII letters, digits, .-_)."""
    return f"{STAFF_EVENTS_GROUP}.role.{role_key}"


def _message(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"type": "staff.event", "kind": kind, "payload": payload}


async def abroadcast_event(
    kind: str, payload: dict[str, Any] | None = None, *, role: str | None = None
) -> None:
    """Send an event to every staff browser, or only to one role's when role is given."""
    layer = get_channel_layer()
    if layer is None:
        return
    group = role_group(role) if role else STAFF_EVENTS_GROUP
    await layer.group_send(group, _message(kind, payload or {}))


def broadcast_event(
    kind: str, payload: dict[str, Any] | None = None, *, role: str | None = None
) -> None:
    """Synchronous broadcast_event for services, tasks and commands."""
    async_to_sync(abroadcast_event)(kind, payload, role=role)


def broadcast_event_on_commit(
    kind: str, payload: dict[str, Any] | None = None, *, role: str | None = None
) -> None:
    """Broadcast once the current transaction commits, so browsers never see uncommitted state."""
    transaction.on_commit(lambda: broadcast_event(kind, payload, role=role))
