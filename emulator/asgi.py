"""ASGI application of the upstream emulator: Django (emulator URLconf) plus a lifespan-run clock loop."""

import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import django  # noqa: E402

django.setup()

from django.core.asgi import get_asgi_application  # noqa: E402

from emulator.middleware import EMULATOR_SCOPE_KEY  # noqa: E402

Scope = dict[str, Any]


class EmulatorApplication:
    """Marks every HTTP request for the emulator URLconf and answers ASGI lifespan itself."""

    def __init__(self) -> None:
        self.django = get_asgi_application()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        scope = {**scope, EMULATOR_SCOPE_KEY: True}
        await self.django(scope, receive, send)

    async def lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


application = EmulatorApplication()
