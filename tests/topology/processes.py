"""Production-like processes for the topology test: each its own process group, killed for real.

Two web processes (uvicorn, production settings), two task workers (`manage.py qcluster`,
django-q2 on the Redis broker), the emulator as an ordinary upstream on its own port, and an
S3-compatible server (moto's) for the files. Nothing here imports Django: the test process does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent.parent
# The topology test's own range (docs/deploy.md); any free port when the range is taken.
PORT_RANGE = range(18300, 18400)


def free_port(taken: set[int]) -> int:
    for port in PORT_RANGE:
        if port in taken:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        taken.add(port)
        return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    taken.add(port)
    return port


@dataclass
class Process:
    """One child: how to start it again (same command, same environment), and its log file."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    url: str = ""
    popen: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self) -> Process:
        handle = self.log.open("ab")
        self.popen = subprocess.Popen(
            self.argv,
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: a kill takes its forked workers too
        )
        handle.close()
        return self

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL to the whole group, as a lost machine or an OOM kill: no clean-up runs."""
        if self.popen is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=30)

    def wait_healthy(self, path: str = "/healthz", timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive:
                raise RuntimeError(f"{self.name} exited while starting:\n{self.tail()}")
            try:
                if httpx.get(self.url + path, timeout=2).status_code < 500:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} did not answer {path} in {timeout}s:\n{self.tail()}")

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def python(*args: str) -> list[str]:
    return [sys.executable, *args]


def web(name: str, port: int, env: dict[str, str], logs: Path) -> Process:
    argv = python(
        "-m",
        "uvicorn",
        "config.asgi:application",
        *("--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"),
        *("--forwarded-allow-ips", ""),
    )
    return Process(name, argv, env, logs / f"{name}.log", url=f"http://127.0.0.1:{port}")


def worker(name: str, env: dict[str, str], logs: Path) -> Process:
    return Process(name, python("manage.py", "qcluster"), env, logs / f"{name}.log")


def emulator(port: int, env: dict[str, str], logs: Path) -> Process:
    argv = python(
        "-m",
        "uvicorn",
        "emulator.asgi:application",
        *("--host", "127.0.0.1", "--port", str(port), "--lifespan", "on"),
        *("--log-level", "warning"),
    )
    return Process("emulator", argv, env, logs / "emulator.log", url=f"http://127.0.0.1:{port}")


def s3_server(port: int, logs: Path) -> Process:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    argv = python("-m", "moto.server", "-H", "127.0.0.1", "-p", str(port))
    return Process("s3", argv, env, logs / "s3.log", url=f"http://127.0.0.1:{port}")


def run(argv: list[str], env: dict[str, str]) -> None:
    completed = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{completed.stdout}\n{completed.stderr}")
