"""Websocket consumer of the webhook stream: join the event log or one object's events."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from staff.roles import has_staff_role
from staff.second_factor.state import sign_in_complete
from webhooks.permissions import GROUP_PERMISSIONS
from webhooks.services.live import EVENT_STREAM_GROUP, object_group

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403


@database_sync_to_async
def _is_staff(user: Any, session: Any) -> bool:
    # A session still at its second step (or its enrolment) is not signed in yet.
    if not sign_in_complete(user, session):
        return False
    return has_staff_role(user)


@database_sync_to_async
def _may(user: Any, permission: str) -> bool:
    # A fresh check on every join: permissions may have changed since the socket opened.
    user.refresh_from_db()
    for cache in ("_perm_cache", "_user_perm_cache", "_group_perm_cache"):
        user.__dict__.pop(cache, None)
    return bool(user.is_active and user.has_perm(permission))


class WebhookStreamConsumer(AsyncJsonWebsocketConsumer):
    """At /ws/webhooks/. Send `{"action": "join", "group": "events"}` for the event log, or
    `{"action": "join", "group": "payout", "id": "<upstream id>"}` (user, virtual_account, payout)
    for one object. Each join is checked against the group's permission."""

    joined: list[str]

    async def connect(self) -> None:
        self.joined = []
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        if not await _is_staff(user, self.scope.get("session")):
            await self.close(code=CLOSE_FORBIDDEN)
            return
        await self.accept()

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict) or content.get("action") != "join":
            await self.send_json({"error": "unknown action"})
            return
        name = str(content.get("group", ""))
        permission = GROUP_PERMISSIONS.get(name)
        if permission is None:
            await self.send_json({"error": "unknown group", "group": name})
            return
        group = (
            EVENT_STREAM_GROUP
            if name == "events"
            else object_group(name, str(content.get("id", "")))
        )
        if group is None:
            await self.send_json({"error": "invalid id", "group": name})
            return
        if not await _may(self.scope["user"], permission):
            await self.send_json({"error": "forbidden", "group": name})
            return
        if group not in self.joined:
            await self.channel_layer.group_add(group, self.channel_name)
            self.joined.append(group)
        await self.send_json({"joined": name, "id": content.get("id")})

    async def webhook_event(self, message: dict[str, Any]) -> None:
        await self.send_json({key: value for key, value in message.items()})
