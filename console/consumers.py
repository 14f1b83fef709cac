"""Websocket consumer streaming staff events (see console.broadcast) to logged-in staff pages."""

from __future__ import annotations

import asyncio
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.utils import timezone

from console.broadcast import STAFF_EVENTS_GROUP, role_group
from staff.roles import has_staff_role, user_roles
from staff.second_factor.state import sign_in_complete
from staff.sessions import SessionCheck, session_check

# Close codes in the application range (4000-4999), mirroring HTTP 401 and 403.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
# The session's expiry time came: live.js reconnects, and the connect check then decides (a person
# active in another tab carries on; an expired session gets 4401 and the page stops listening).
CLOSE_SESSION_RECHECK = 4408


@database_sync_to_async
def _signed_in(user: Any, session: Any) -> bool:
    # A session still at its second step (or its enrolment) is not signed in yet.
    return sign_in_complete(user, session)


@database_sync_to_async
def _access(user: Any) -> tuple[bool, list[str]]:
    if not has_staff_role(user):
        return False, []
    return True, [role.key for role in user_roles(user)]


@database_sync_to_async
def _session(scope: dict[str, Any], user: Any) -> SessionCheck | None:
    session = scope.get("session")
    if session is None:
        return None
    return session_check(session, user, touch=False)


class StaffEventsConsumer(AsyncJsonWebsocketConsumer):
    """At /ws/events/: staff with a role join `staff.events` and their roles' groups."""

    groups_joined: list[str]
    recheck: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        self.groups_joined = []
        user = self.scope.get("user")
        if (
            user is None
            or not user.is_authenticated
            or not await _signed_in(user, self.scope.get("session"))
        ):
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        # Sessions expire (staff.sessions): an idle or too old one gets no stream.
        check = await _session(self.scope, user)
        if check is not None and check.reason is not None:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        allowed, roles = await _access(user)
        if not allowed:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        groups = [STAFF_EVENTS_GROUP, *(role_group(role) for role in roles)]
        for group in groups:
            await self.channel_layer.group_add(group, self.channel_name)
            self.groups_joined.append(group)
        await self.accept()
        if check is not None:
            seconds = max((check.deadline - timezone.now()).total_seconds(), 0) + 1
            self.recheck = asyncio.create_task(self._recheck_after(seconds))

    async def _recheck_after(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        await self.close(code=CLOSE_SESSION_RECHECK)

    async def disconnect(self, code: int) -> None:
        if self.recheck is not None:
            self.recheck.cancel()
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        # The stream is one-way: browsers act through HTMX requests, not over this socket.
        return

    async def staff_event(self, event: dict[str, Any]) -> None:
        await self.send_json({"kind": event["kind"], "payload": event.get("payload", {})})
