"""Shared setup of the benchmarks: free port, environment, migrations, emulator process, health."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(tmp: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    if not env.get("DATABASE_URL"):
        env["PAYOPS_SQLITE_PATH"] = str(Path(tmp) / "bench.sqlite3")
        env["EMULATOR_SQLITE_PATH"] = str(Path(tmp) / "bench-emulator.sqlite3")
    env["EMULATOR_CONTROL_TOKEN"] = secrets.token_urlsafe(16)
    env["PAYOPS_LOG_LEVEL"] = "WARNING"
    env["PYTHONPATH"] = str(ROOT)
    return env


def migrate(env: dict[str, str]) -> None:
    """Migrate the run's databases (the emulator has its own) and create the cache table."""
    for command in (
        ["migrate", "--noinput", "-v", "0"],
        ["migrate", "--database", "emulator", "--noinput", "-v", "0"],
        ["createcachetable"],
    ):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True)


def start_emulator(port: int, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    """The emulator under uvicorn, lifespan on (its periodic jobs run), in its own process."""
    return subprocess.Popen(
        [
            *[sys.executable, "-m", "uvicorn", "emulator.asgi:application", "--port", str(port)],
            *["--lifespan", "on", "--log-level", "warning", *extra],
        ],
        cwd=ROOT,
        env=env,
    )


def django_setup() -> None:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def wait_healthy(url: str, process: subprocess.Popen[bytes], verify: bool | str = True) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("the emulator exited during startup")
        try:
            if httpx.get(url + "/healthz", timeout=1, verify=verify).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("the emulator did not become healthy")
