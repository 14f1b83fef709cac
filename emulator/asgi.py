"""ASGI application of the emulator: Django (emulator URLconf) behind the edge, plus a job loop."""

import asyncio
import contextlib
import logging
import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import django
from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# Settings where the control surface may run with the development token of local/test settings.
DEVELOPMENT_ENVIRONMENTS = ("local", "test")


def assert_may_start() -> None:
    """The emulator runs only where it is installed, and never with an open control surface."""
    if not apps.is_installed("emulator"):
        raise ImproperlyConfigured(
            f"The emulator is not installed in {settings.SETTINGS_MODULE}: it is a guest of the "
            "local, test and emulator settings only (config.settings.emulator runs it on its own)."
        )
    if (
        settings.PAYOPS_ENVIRONMENT not in DEVELOPMENT_ENVIRONMENTS
        and not settings.EMULATOR_CONTROL_TOKEN
    ):
        raise ImproperlyConfigured(
            f"The emulator refuses to start under {settings.PAYOPS_ENVIRONMENT} settings without "
            "EMULATOR_CONTROL_TOKEN: its /_control/ API would be unprotected."
        )


try:
    django.setup()
    assert_may_start()
except ImproperlyConfigured as exc:
    # Under uvicorn a refused configuration would print a traceback wall; one line says it all.
    raise SystemExit(f"emulator: {exc}") from None

from asgiref.sync import sync_to_async  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402
from django.db import connections  # noqa: E402

from emulator import edge, loop  # noqa: E402
from emulator.middleware import EMULATOR_SCOPE_KEY  # noqa: E402

Scope = dict[str, Any]
logger = logging.getLogger("emulator")


def _run_job(job: Any) -> None:
    try:
        job()
    finally:
        connections.close_all()


async def run_periodic_jobs(interval: float) -> None:
    """Calls every loop.PERIODIC_JOBS function each `interval` seconds; a failure is logged only."""
    while True:
        await asyncio.sleep(interval)
        for job in list(loop.PERIODIC_JOBS):
            try:
                await sync_to_async(_run_job, thread_sensitive=False)(job)
            except Exception:
                logger.exception("periodic job %s failed", getattr(job, "__name__", job))


class EmulatorApplication:
    """Marks every HTTP request for the emulator URLconf, puts API calls through the edge (limits,
    faults) and answers ASGI lifespan itself, running the periodic jobs meanwhile."""

    def __init__(self) -> None:
        assert_may_start()
        self.django = get_asgi_application()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        scope = {**scope, EMULATOR_SCOPE_KEY: True}
        if scope["type"] == "http" and edge.is_limited_path(scope.get("path", "")):
            await edge.handle(scope, receive, send, self.django)
            return
        await self.django(scope, receive, send)

    async def lifespan(self, receive: Any, send: Any) -> None:
        task: asyncio.Task[None] | None = None
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    assert_may_start()
                except ImproperlyConfigured as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                interval = float(settings.EMULATOR_LOOP_INTERVAL)
                task = asyncio.create_task(run_periodic_jobs(interval))
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                await send({"type": "lifespan.shutdown.complete"})
                return


def _build() -> EmulatorApplication:
    try:
        return EmulatorApplication()
    except ImproperlyConfigured as exc:
        raise SystemExit(f"emulator: {exc}") from None


application = _build()
