"""Websocket consumer streaming events to staff pages (placeholder)."""

from channels.generic.websocket import AsyncJsonWebsocketConsumer


class StaffEventsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        await self.accept()
