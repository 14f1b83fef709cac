"""Several processes share one token and one limiter: the emulator, watching, sees no excess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from emulator import limits as emulator_limits
from emulator.models import ApiClient
from gateway.models import Environment
from tests.gateway.conftest import LiveEmulator, child_environment, make_environment

CHILD = Path(__file__).with_name("child_caller.py")


def _run_children(
    environment: Environment, count: int, action: str, seconds: float, *extra: str
) -> list[dict[str, int]]:
    processes = [
        subprocess.Popen(
            [sys.executable, str(CHILD), str(environment.pk), action, str(seconds), *extra],
            env=child_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    outcomes = []
    for process in processes:
        out, err = process.communicate(timeout=180)
        assert process.returncode == 0, err[-3000:]
        outcomes.append(json.loads(out.strip().splitlines()[-1]))
    return outcomes


def _max_in_any_second(starts: list[float]) -> int:
    starts = sorted(starts)
    best = 0
    for i, start in enumerate(starts):
        j = i
        while j < len(starts) and starts[j] < start + 1.0:
            j += 1
        best = max(best, j - i)
    return best


def _max_overlap(requests: list[dict[str, Any]]) -> int:
    edges = sorted(
        [(r["start"], 1) for r in requests] + [(r.get("end", r["start"]), -1) for r in requests],
        key=lambda e: (e[0], e[1]),
    )
    current = best = 0
    for _, delta in edges:
        current += delta
        best = max(best, current)
    return best


def test_two_processes_share_one_token(live_emulator: LiveEmulator, sandbox: Environment) -> None:
    outcomes = _run_children(sandbox, 2, "once", 0)
    assert [o["ok"] for o in outcomes] == [1, 1]
    assert live_emulator.witness.count("/sandbox/auth") == 1
    assert live_emulator.witness.count("/sandbox/v1/quotations", "POST") == 2


def test_three_processes_never_exceed_rate_or_concurrency(
    live_emulator: LiveEmulator,
) -> None:
    environment = make_environment(live_emulator, rate_per_second=10, max_concurrent=2)
    outcomes = _run_children(environment, 3, "hammer", 4)
    requests = live_emulator.witness.api_requests()
    statuses = [r["status"] for r in requests]
    # The independent witnesses: the emulator answered no 429, its own in-flight peak and the
    # recorded request times stay inside the limits.
    assert 429 not in statuses, (
        _max_in_any_second([r["start"] for r in requests]),
        [r.get("body") for r in requests if r["status"] == 429],
    )
    client = ApiClient.objects.get(pk=ApiClient.objects.order_by("-pk").first().pk)
    assert emulator_limits.LIMITER.peak_in_flight(emulator_limits.client_key(client)) <= 2
    assert _max_overlap(requests) <= 2
    assert _max_in_any_second([r["start"] for r in requests]) <= 10
    assert sum(o["ok"] for o in outcomes) == len(requests) - 1  # all but the one /auth
    assert all(o["rate_limited"] == 0 for o in outcomes)
    assert len(requests) >= 20  # the limiter let the processes work, not just wait


def test_weekly_budget_is_shared_and_never_exceeded(live_emulator: LiveEmulator) -> None:
    environment = make_environment(live_emulator, weekly_budget=12)
    outcomes = _run_children(environment, 3, "hammer", 10)
    requests = live_emulator.witness.api_requests()
    assert len(requests) == 12  # the /auth counts against the budget too
    assert all(o["budget"] == 1 for o in outcomes)
    assert sum(o["ok"] for o in outcomes) == 11


def test_background_work_stops_at_its_share(live_emulator: LiveEmulator) -> None:
    environment = make_environment(live_emulator, weekly_budget=20)  # background share 0.5
    outcomes = _run_children(environment, 2, "hammer", 10, "background")
    # The token is fetched once for everyone (staff priority); the rest is background work.
    assert live_emulator.witness.count("/sandbox/auth") == 1
    assert len(live_emulator.witness.api_requests()) == 1 + 10
    assert all(o["budget"] == 1 for o in outcomes)
