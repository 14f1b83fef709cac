"""Run the web server, the task worker and the emulator together for `make run` (stdlib only).

Each child's output is shown line by line behind a coloured name. One Ctrl-C (SIGINT) or SIGTERM
stops every child: SIGTERM to its process group, then SIGKILL after a grace period. If a child
dies on its own, the others are stopped and this script exits non-zero.

    python scripts/run_all.py                      # web :8000, worker, emulator :8001
    python scripts/run_all.py --child "a=sleep 5"  # any commands instead (used by the tests)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import selectors
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TextIO

ROOT = Path(__file__).resolve().parent.parent
WEB_URL = "http://127.0.0.1:8000"
EMULATOR_URL = "http://127.0.0.1:8001"
COLOURS = ("36", "33", "35", "32", "34", "31")  # cyan, yellow, magenta, green, blue, red

# Runs in a child interpreter so that this supervisor stays free of Django: it proves the
# database answers and reads the demo logins that `manage.py payops_bootstrap` created.
PREFLIGHT = """
import json, django
django.setup()
from django.db import connection
from django.db.utils import OperationalError
try:
    connection.ensure_connection()
except OperationalError as exc:
    print(json.dumps({"error": (str(exc).strip().splitlines() or [type(exc).__name__])[0]}))
    raise SystemExit(0)
logins, password = [], None
try:
    from staff.bootstrap import DEMO_PASSWORD, demo_logins
    logins = [[str(role.display_name), email] for role, email in demo_logins()]
    password = DEMO_PASSWORD
except ImportError:
    pass
from django.conf import settings
print(json.dumps({"database": connection.vendor, "logins": logins, "password": password,
                  "settings": settings.SETTINGS_MODULE,
                  "trusted_proxies": list(settings.PAYOPS_TRUSTED_PROXIES)}))
"""


@dataclass
class Child:
    """One supervised process: its name, command line, and what we have read of its output."""

    name: str
    argv: list[str]
    colour: str = "0"
    process: subprocess.Popen[bytes] | None = None
    pending: bytes = b""
    fd: int = -1


def default_children(python: str, trusted_proxies: list[str] | None = None) -> list[Child]:
    """The web server, the worker and the emulator.

    uvicorn believes X-Forwarded-For/-Proto only from `trusted_proxies` (the settings'
    PAYOPS_TRUSTED_PROXIES; none by default): left to itself it trusts the loopback, and any
    local client could then choose its own address (issue 19).
    """
    return [
        Child(
            "web",
            [
                python,
                "-m",
                "uvicorn",
                "config.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                "8000",
                "--forwarded-allow-ips",
                ",".join(trusted_proxies or []),
            ],
        ),
        Child("worker", [python, "manage.py", "qcluster"]),
        Child(
            "emulator",
            [
                python,
                "-m",
                "uvicorn",
                "emulator.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                "8001",
                "--lifespan",
                "on",
            ],
        ),
    ]


class Supervisor:
    """Starts children, relays their output, and stops them all together."""

    def __init__(
        self,
        children: list[Child],
        *,
        grace: float = 10.0,
        out: TextIO = sys.stdout,
        colour: bool | None = None,
        reminder: str | None = None,
        reminder_after: float = 5.0,
    ) -> None:
        self.children = children
        self.grace = grace
        self.out = out
        # Printed once more after start-up, when the children's own start-up lines have scrolled
        # the banner away.
        self.reminder = reminder
        self.reminder_after = reminder_after
        self.signals_received = 0
        if colour is None:
            colour = out.isatty() and "NO_COLOR" not in os.environ
        self.colour = colour
        self.stop_signal: int | None = None
        self.selector = selectors.DefaultSelector()
        width = max(len(child.name) for child in children)
        self.width = width
        for index, child in enumerate(children):
            child.colour = COLOURS[index % len(COLOURS)]

    def say(self, name: str, line: str, colour: str = "1") -> None:
        label = name.ljust(self.width)
        if self.colour:
            label = f"\033[{colour}m{label}\033[0m"
        self.out.write(f"{label} | {line}\n")
        self.out.flush()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.signals_received += 1
        if self.stop_signal is None:
            self.stop_signal = signum

    def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for child in self.children:
            # A session of its own: the terminal's Ctrl-C reaches only us, and we stop the
            # child's whole process group (qcluster forks workers) in order.
            child.process = subprocess.Popen(  # noqa: S603
                child.argv,
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            assert child.process.stdout is not None
            child.fd = child.process.stdout.fileno()
            os.set_blocking(child.fd, False)
            self.selector.register(child.fd, selectors.EVENT_READ, child)
            self.say(
                child.name,
                f"started (pid {child.process.pid}): {shlex.join(child.argv)}",
                child.colour,
            )

    def _read(self, child: Child) -> None:
        try:
            chunk = os.read(child.fd, 65536)
        except BlockingIOError:
            return
        if not chunk:
            self.selector.unregister(child.fd)
            if child.pending:
                self.say(child.name, child.pending.decode(errors="replace"), child.colour)
                child.pending = b""
            return
        *lines, child.pending = (child.pending + chunk).split(b"\n")
        for line in lines:
            self.say(child.name, line.decode(errors="replace").rstrip("\r"), child.colour)

    def pump(self, timeout: float) -> None:
        for key, _ in self.selector.select(timeout):
            self._read(key.data)

    def first_exited(self) -> Child | None:
        for child in self.children:
            if child.process is not None and child.process.poll() is not None:
                return child
        return None

    def _signal_all(self, sig: int) -> None:
        for child in self.children:
            if child.process is not None and child.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.process.pid, sig)

    def stop(self) -> None:
        # SIGTERM to each child itself, not its group: qcluster stops its own workers in order
        # and takes it badly when they are signalled behind its back. SIGKILL goes to the group.
        for child in self.children:
            if child.process is not None and child.process.poll() is None:
                child.process.terminate()
        # A second Ctrl-C while waiting means "now": skip the rest of the grace period.
        patience_ends = 2 if self.stop_signal is not None else self.signals_received + 1
        deadline = time.monotonic() + self.grace
        while (
            time.monotonic() < deadline
            and self.signals_received < patience_ends
            and any(
                child.process is not None and child.process.poll() is None
                for child in self.children
            )
        ):
            self.pump(0.1)
        for child in self.children:
            if child.process is not None and child.process.poll() is None:
                self.say(child.name, "did not stop in time; killing", child.colour)
        self._signal_all(signal.SIGKILL)
        for child in self.children:
            if child.process is not None:
                child.process.wait()
                # Leftover workers of the group (qcluster's) must not outlive their parent.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.process.pid, signal.SIGKILL)
        while self.selector.get_map():
            self.pump(0.1)

    def run(self) -> int:
        """Supervise until a signal (exit 0) or a child's own exit (exit non-zero)."""
        previous = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            self.start()
            started = time.monotonic()
            exit_code = 0
            while self.stop_signal is None:
                self.pump(0.2)
                if self.reminder and time.monotonic() - started >= self.reminder_after:
                    self.out.write(self.reminder + "\n")
                    self.out.flush()
                    self.reminder = None
                dead = self.first_exited()
                if dead is not None and dead.process is not None:
                    code = dead.process.returncode
                    self.say(
                        dead.name,
                        f"exited unexpectedly with code {code}; stopping the others",
                        dead.colour,
                    )
                    exit_code = code if code > 0 else 1
                    break
            else:
                self.say("payops", f"{signal.Signals(self.stop_signal).name}: stopping everything")
            self.stop()
            for child in self.children:
                assert child.process is not None
                self.say(child.name, f"stopped (code {child.process.returncode})", child.colour)
            return exit_code
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def preflight(python: str) -> dict[str, object] | None:
    """Database reachable and demo logins, or None after printing why we cannot start."""
    completed = subprocess.run(  # noqa: S603
        [python, "-c", PREFLIGHT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": os.environ.get(
                "DJANGO_SETTINGS_MODULE", "config.settings.local"
            ),
        },
    )
    if completed.returncode != 0:
        lines = completed.stderr.strip().splitlines()
        sys.stderr.write(f"PayOps cannot start: {lines[-1] if lines else 'preflight failed'}\n")
        return None
    report: dict[str, object] = json.loads(completed.stdout.strip().splitlines()[-1])
    if "error" in report:
        sys.stderr.write(
            f"PayOps cannot reach its database: {report['error']}\n"
            "Check DATABASE_URL (unset means the embedded SQLite file in var/) and that the "
            "server is running.\n"
        )
        return None
    return report


def banner(report: dict[str, object]) -> str:
    lines = [
        "",
        f"  PayOps back office  {WEB_URL}/   (API docs {WEB_URL}/api/v1/docs, "
        f"readiness {WEB_URL}/readyz)",
        f"  Upstream emulator   {EMULATOR_URL}/",
        f"  Settings {report.get('settings')}, database {report.get('database')}",
    ]
    logins = report.get("logins") or []
    if logins:
        lines.append(f"  Demo logins (password {report.get('password')!s}):")
        for display_name, email in logins:  # type: ignore[attr-defined]
            lines.append(f"    {display_name:<18} {email}")
    lines.append("  Ctrl-C stops everything.")
    lines.append("")
    return "\n".join(lines)


def parse_child(text: str) -> Child:
    name, sep, command = text.partition("=")
    if not sep or not name or not command.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=COMMAND, got {text!r}")
    return Child(name, shlex.split(command))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--child",
        action="append",
        type=parse_child,
        default=[],
        help="NAME=COMMAND to run instead of the default three (repeatable)",
    )
    parser.add_argument(
        "--grace", type=float, default=10.0, help="seconds a child has to stop before it is killed"
    )
    parser.add_argument(
        "--skip-preflight", action="store_true", help="do not check the database before starting"
    )
    options = parser.parse_args(argv)
    python = sys.executable
    if not options.skip_preflight:
        report = preflight(python)
        if report is None:
            return 3
        proxies = report.get("trusted_proxies")
        trusted = [str(p) for p in proxies] if isinstance(proxies, list) else []
        children = options.child or default_children(python, trusted)
        text = banner(report)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return Supervisor(children, grace=options.grace, reminder=text).run()
    children = options.child or default_children(python)
    return Supervisor(children, grace=options.grace).run()


if __name__ == "__main__":
    sys.exit(main())
