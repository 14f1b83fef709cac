"""scripts/run_all.py: starts its children, relays their output, and stops them all together."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "run_all.py"
PY = sys.executable

SLEEPER = (
    f"{PY} -c \"import os, time; print('hello from', os.getpid(), flush=True); time.sleep(600)\""
)
STUBBORN = (
    f'{PY} -c "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); '
    "print('ignoring SIGTERM', flush=True); time.sleep(600)\""
)
FAILING = (
    f"{PY} -c \"import time; time.sleep(1); print('giving up', flush=True); raise SystemExit(3)\""
)


def _start(*children: str, grace: float = 5.0) -> subprocess.Popen[str]:
    argv = [PY, str(SCRIPT), "--skip-preflight", "--grace", str(grace)]
    for child in children:
        argv += ["--child", child]
    return subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )


def _read_until(process: subprocess.Popen[str], pattern: str, count: int = 1) -> list[str]:
    """Lines of output up to the count-th line matching pattern (fails if output ends first)."""
    assert process.stdout is not None
    lines, found = [], 0
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if re.search(pattern, line):
            found += 1
            if found == count:
                return lines
    raise AssertionError(f"output ended before {pattern!r} x{count}: {lines}")


def _started_pids(lines: list[str]) -> dict[str, int]:
    return {
        m.group(1): int(m.group(2))
        for line in lines
        if (m := re.match(r"(\w+)\s*\| started \(pid (\d+)\)", line))
    }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_one_signal_stops_every_child_and_exits_zero(sig: signal.Signals) -> None:
    process = _start(f"alpha={SLEEPER}", f"beta={SLEEPER}")
    lines = _read_until(process, r"\| hello from \d+", count=2)
    pids = _started_pids(lines)
    assert set(pids) == {"alpha", "beta"}
    assert any(re.match(r"alpha \| hello from \d+", line) for line in lines)
    assert any(re.match(r"beta\s+\| hello from \d+", line) for line in lines)

    process.send_signal(sig)
    rest, _ = process.communicate(timeout=60)

    assert process.returncode == 0, rest
    assert f"{sig.name}: stopping everything" in rest
    assert all(not _alive(pid) for pid in pids.values())


def test_a_child_dying_stops_the_others_and_exits_non_zero() -> None:
    process = _start(f"steady={SLEEPER}", f"flaky={FAILING}")
    output, _ = process.communicate(timeout=60)

    assert process.returncode == 3, output
    assert "flaky  | giving up" in output
    assert "flaky  | exited unexpectedly with code 3; stopping the others" in output
    pids = _started_pids(output.splitlines())
    assert not _alive(pids["steady"])


def test_a_child_ignoring_sigterm_is_killed_after_the_grace_period() -> None:
    process = _start(f"stubborn={STUBBORN}", grace=1.0)
    lines = _read_until(process, r"\| ignoring SIGTERM")
    pid = _started_pids(lines)["stubborn"]

    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=60)

    assert process.returncode == 0
    assert "did not stop in time; killing" in rest
    assert f"stopped (code {-signal.SIGKILL})" in rest
    assert not _alive(pid)


def test_an_unreachable_database_stops_make_run_before_any_child_starts() -> None:
    completed = subprocess.run(
        [PY, str(SCRIPT), "--child", f"never={SLEEPER}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DATABASE_URL": "postgres://postgres@127.0.0.1:1/payops_nowhere",
            "DATABASE_POOL_TIMEOUT": "1",
        },
    )

    assert completed.returncode == 3
    assert "PayOps cannot reach its database:" in completed.stderr
    assert "started" not in completed.stdout


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_banner_shows_the_urls_and_the_demo_logins(tmp_path: Path) -> None:
    # A fresh embedded database, migrated and bootstrapped the way `make run` does it.
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": "",
        "PAYOPS_SQLITE_PATH": str(tmp_path / "run.sqlite3"),
        # The emulator's own database, and no server: the bootstrap uses it in-process.
        "EMULATOR_SQLITE_PATH": str(tmp_path / "emulator.sqlite3"),
        "EMULATOR_URL": f"http://127.0.0.1:{_free_port()}",
        "NO_COLOR": "1",
    }
    for command in (
        ["migrate", "--noinput"],
        ["createcachetable"],  # as `make migrate` does: the gateway's limiter and tokens use it
        ["migrate", "--database", "emulator", "--noinput"],
        ["payops_bootstrap"],
    ):
        subprocess.run(
            [PY, "manage.py", *command],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            timeout=300,
        )
    completed = subprocess.run(
        [PY, str(SCRIPT), "--child", f"quick={PY} -c \"print('done')\""],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert "http://127.0.0.1:8000/" in completed.stdout
    assert "http://127.0.0.1:8001/" in completed.stdout
    assert "maker@payops.local" in completed.stdout
    assert "admin@payops.local" in completed.stdout
    assert "password payops-demo" in completed.stdout
    # The lone child finishing on its own is unexpected for a supervisor: non-zero.
    assert completed.returncode == 1
    assert "quick | done" in completed.stdout


def test_a_second_signal_kills_at_once_instead_of_waiting_out_the_grace_period() -> None:
    process = _start(f"stubborn={STUBBORN}", grace=600.0)
    pid = _started_pids(_read_until(process, r"\| ignoring SIGTERM"))["stubborn"]

    process.send_signal(signal.SIGINT)
    _read_until(process, r"SIGINT: stopping everything")
    process.send_signal(signal.SIGINT)
    # Without the second signal this would wait the full 600 s grace period and time out.
    rest, _ = process.communicate(timeout=60)

    assert process.returncode == 0
    assert "stubborn | did not stop in time; killing" in rest
    assert not _alive(pid)


def test_uvicorn_believes_forwarded_headers_only_from_the_configured_proxies() -> None:
    """Left to itself uvicorn trusts X-Forwarded-For from the loopback (issue 19's probe)."""
    from scripts.run_all import default_children

    def web_flag(proxies: list[str] | None) -> str:
        argv = next(child.argv for child in default_children(PY, proxies) if child.name == "web")
        return argv[argv.index("--forwarded-allow-ips") + 1]

    assert web_flag(None) == ""  # uvicorn: an empty list trusts no one
    assert web_flag(["10.0.0.0/24", "192.0.2.7"]) == "10.0.0.0/24,192.0.2.7"
