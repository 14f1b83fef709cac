"""The emulator's ASGI lifespan: periodic jobs run, failures are logged, shutdown cancels."""

import asyncio
import threading

import pytest
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


@pytest.mark.parametrize(
    ("settings_module", "says"),
    [
        ("config.settings.production", "is not installed in config.settings.production"),
        ("config.settings.emulator", "without EMULATOR_CONTROL_TOKEN"),
    ],
)
def test_uvicorn_refuses_production_and_a_tokenless_emulator_in_one_line(
    settings_module: str, says: str
) -> None:
    """The real command: exit status 1, one clear line, no traceback."""
    import os
    import subprocess
    import sys

    from cryptography.fernet import Fernet

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings_module,
        "DJANGO_SECRET_KEY": "refusal-test",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/payops_refusal_test",
        "REDIS_URL": "redis://127.0.0.1:6379/7",
        "DJANGO_ALLOWED_HOSTS": "localhost",
        "PAYOPS_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        "PAYOPS_S3_BUCKET": "payops-documents",
        "EMULATOR_CONTROL_TOKEN": "",
    }
    command = [sys.executable, "-m", "uvicorn", "emulator.asgi:application", "--port", "0"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("emulator:")]
    assert says in line
