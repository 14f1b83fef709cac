"""Broadcast stored events (after commit) to the event stream and to per-object groups."""

from __future__ import annotations

import logging
import re
from typing import Any

from console.broadcast import asend_recorded, group_send_on_commit, outbox_record
from webhooks import contract

logger = logging.getLogger(__name__)

EVENT_STREAM_GROUP = "webhooks.events"
_GROUP_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


def object_group(kind: str, upstream_id: str) -> str | None:
    """The live group of one user, virtual account or payout (None for anything else)."""
    if kind not in contract.LIVE_OBJECT_KINDS or not _GROUP_ID.match(upstream_id):
        return None
    return f"webhooks.{kind}.{upstream_id}"


def event_message(event: Any) -> dict[str, Any]:
    """What a browser is told: what arrived and where to fetch it, never the payload itself."""
    return {
        "type": "webhook.event",
        "pk": event.pk,
        "event_id": event.event_id,
        "event_type": event.event_type,
        "status": event.status,
        "environment_id": event.environment_id,
        "received_at": event.received_at.isoformat(),
    }


def event_groups(event: Any) -> list[str]:
    groups = [EVENT_STREAM_GROUP]
    for kind, upstream_id in contract.named_objects(event.event_type, event.data):
        group = object_group(kind, upstream_id)
        if group and group not in groups:
            groups.append(group)
    return groups


def event_record(message: dict[str, Any], groups: list[str]) -> None:
    """Inside the receiver's transaction: the rows that carry the message to other processes
    (embedded default), one INSERT under the receiver's own write turn; `abroadcast` follows."""
    outbox_record(message, groups)


async def abroadcast(message: dict[str, Any], groups: list[str]) -> None:
    """After `event_record`'s transaction committed: send the message on; a channel-layer outage
    is logged, never raised."""
    try:
        await asend_recorded(message, groups)
    except Exception:
        # The event is stored and will be found on the page: a layer outage must not turn an
        # acknowledged delivery into an error (the upstream would retry what we already hold).
        logger.exception("webhook event broadcast failed for %s", message.get("event_id"))


def event_broadcast_on_commit(event: Any) -> None:
    """Once the caller's transaction commits (on the embedded default, the outbox rows that
    carry it to other processes' pages are written in that transaction)."""
    group_send_on_commit(event_message(event), event_groups(event))
