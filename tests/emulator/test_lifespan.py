"""The emulator's ASGI lifespan: periodic jobs run, failures are logged, shutdown cancels."""

import asyncio
import threading

from django.test import override_settings

from emulator import loop
from emulator.asgi import application, assert_may_start


async def test_lifespan_runs_periodic_jobs_and_survives_failures(caplog):
    runs: list[int] = []
    three_runs = threading.Event()

    def good() -> None:
        runs.append(1)
        if len(runs) >= 3:
            three_runs.set()

    def bad() -> None:
        raise RuntimeError("job failure")

    inbox: asyncio.Queue = asyncio.Queue()
    outbox: asyncio.Queue = asyncio.Queue()
    saved = list(loop.PERIODIC_JOBS)
    loop.PERIODIC_JOBS[:] = [bad, good]
    try:
        with override_settings(EMULATOR_LOOP_INTERVAL=0.01):
            task = asyncio.create_task(application({"type": "lifespan"}, inbox.get, outbox.put))
            await inbox.put({"type": "lifespan.startup"})
            assert (await outbox.get())["type"] == "lifespan.startup.complete"
            assert await asyncio.to_thread(three_runs.wait, 30)
            await inbox.put({"type": "lifespan.shutdown"})
            assert (await outbox.get())["type"] == "lifespan.shutdown.complete"
            await task
    finally:
        loop.PERIODIC_JOBS[:] = saved
    assert "periodic job bad failed" in caplog.text
    count = len(runs)
    await asyncio.sleep(0.05)
    assert len(runs) == count  # cancelled on shutdown


async def test_lifespan_startup_fails_in_production_without_token():
    inbox: asyncio.Queue = asyncio.Queue()
    outbox: asyncio.Queue = asyncio.Queue()
    with override_settings(PAYOPS_ENVIRONMENT="production", EMULATOR_CONTROL_TOKEN=""):
        task = asyncio.create_task(application({"type": "lifespan"}, inbox.get, outbox.put))
        await inbox.put({"type": "lifespan.startup"})
        message = await outbox.get()
        await task
    assert message["type"] == "lifespan.startup.failed"
    assert "EMULATOR_CONTROL_TOKEN" in message["message"]


def test_assert_may_start():
    with override_settings(PAYOPS_ENVIRONMENT="production", EMULATOR_CONTROL_TOKEN="t"):
        assert_may_start()
