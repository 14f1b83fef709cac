"""Push small "something changed" messages to staff browsers over the channel layer (after commit).

Services call `broadcast_event_on_commit` (or `group_send_on_commit` for their own groups) inside
their transaction. On the embedded default (console.live's OutboxChannelLayer) the message is
written to the live outbox in that same transaction, so other processes' pages hear of exactly
the committed changes, and it reaches this process's pages at commit; with Redis it is sent to
channels-redis at commit. The same message queued twice in one transaction is sent once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from console.live.layer import OutboxChannelLayer
from staff.roles import ROLES

logger = logging.getLogger(__name__)

# Every connected staff member listens on this group; per-role groups add a suffix.
STAFF_EVENTS_GROUP = "staff.events"


def role_group(role_key: str) -> str:
    """The group of staff holding one role (group names allow only ASCII letters, digits, .-_)."""
    return f"{STAFF_EVENTS_GROUP}.role.{role_key}"


def roles_holding(*permissions: str) -> tuple[str, ...]:
    """The keys of the roles holding any of `permissions`: who may hear about such records."""
    wanted = set(permissions)
    return tuple(role.key for role in ROLES if wanted & set(role.permissions))


def _message(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"type": "staff.event", "kind": kind, "payload": payload}


def _groups(role: str | None, roles: Sequence[str]) -> list[str]:
    chosen = [*([role] if role else []), *roles]
    return [role_group(key) for key in dict.fromkeys(chosen)] or [STAFF_EVENTS_GROUP]


async def agroup_send(message: dict[str, Any], groups: Iterable[str]) -> None:
    """Send one message to `groups` now (from async code, after the data it names committed)."""
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, OutboxChannelLayer):
        await layer.group_send_many(groups, message)
        return
    for group in groups:
        await layer.group_send(group, message)


async def abroadcast_event(
    kind: str,
    payload: dict[str, Any] | None = None,
    *,
    role: str | None = None,
    roles: Sequence[str] = (),
) -> None:
    """Send an event to every staff browser, or only to the given roles' browsers."""
    await agroup_send(_message(kind, payload or {}), _groups(role, roles))


def broadcast_event(
    kind: str,
    payload: dict[str, Any] | None = None,
    *,
    role: str | None = None,
    roles: Sequence[str] = (),
) -> None:
    """Synchronous broadcast_event for services, tasks and commands (sent now, not on commit)."""
    async_to_sync(abroadcast_event)(kind, payload, role=role, roles=roles)


class _Delivery:
    """An on_commit callback that remembers what it sends, so a twin in the same transaction
    can see it is already queued (Django drops it with its savepoint on a rollback)."""

    def __init__(self, key: str, send: Callable[[], None]) -> None:
        self.key = key
        self.send = send

    def __call__(self) -> None:
        try:
            self.send()
        except Exception:
            # The change is committed and the pages re-read it on their next visit: a channel
            # layer outage must not turn a committed change into an error for its caller.
            logger.exception("live update %s could not be delivered", self.key[:200])


def _queued(key: str) -> bool:
    connection = transaction.get_connection()
    if not connection.in_atomic_block:
        return False
    return any(getattr(entry[1], "key", None) == key for entry in connection.run_on_commit)


def group_send_on_commit(message: dict[str, Any], groups: Iterable[str]) -> None:
    """Send `message` to `groups` once the current transaction commits (nothing on rollback)."""
    groups = list(dict.fromkeys(groups))
    key = json.dumps([groups, message], sort_keys=True, default=str)
    layer = get_channel_layer()
    if layer is None or not groups or _queued(key):
        return
    if isinstance(layer, OutboxChannelLayer):
        layer.record(groups, message)  # in this transaction: visible to others at its commit
        transaction.on_commit(_Delivery(key, lambda: layer.deliver_local_sync(groups, message)))
        return
    transaction.on_commit(_Delivery(key, lambda: async_to_sync(agroup_send)(message, groups)))


def outbox_record(message: dict[str, Any], groups: Iterable[str]) -> None:
    """The first half of group_send_on_commit, for a caller that sends from async code after
    its transaction (the webhook receiver): on the embedded default, write the outbox rows now,
    in the caller's transaction; then call `asend_recorded` once it has committed."""
    layer = get_channel_layer()
    if isinstance(layer, OutboxChannelLayer):
        layer.record(groups, message)


async def asend_recorded(message: dict[str, Any], groups: Iterable[str]) -> None:
    """The second half: to this process's pages (the outbox reaches the others), or, with any
    other layer, to everyone."""
    layer = get_channel_layer()
    if isinstance(layer, OutboxChannelLayer):
        await layer.deliver_local(groups, message)
    elif layer is not None:
        await agroup_send(message, groups)


def broadcast_event_on_commit(
    kind: str,
    payload: dict[str, Any] | None = None,
    *,
    role: str | None = None,
    roles: Sequence[str] = (),
) -> None:
    """Broadcast once the current transaction commits, so browsers never see uncommitted state."""
    group_send_on_commit(_message(kind, payload or {}), _groups(role, roles))
