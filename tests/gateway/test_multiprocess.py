"""Several processes share one token and one limiter: the emulator, watching, sees no excess."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import transaction

from emulator import limits as emulator_limits
from emulator.models import ApiClient, EmulatedUser
from gateway import limiter
from gateway.client import call_sync, upstream
from gateway.errors import CalledInTransaction
from gateway.models import Environment, UpstreamCall
from tests.gateway.conftest import LiveEmulator, child_environment, make_environment
from users.models import EndUser

CHILD = Path(__file__).with_name("child_caller.py")


def _start_child(
    environment: Environment,
    action: str,
    seconds: float,
    *extra: str,
    settings_env: dict[str, str] | None = None,
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(environment.pk), action, str(seconds), *extra],
        env={**child_environment(), **(settings_env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _outcome(process: subprocess.Popen[str], *, returncode: int = 0) -> dict[str, Any]:
    out, err = process.communicate(timeout=180)
    assert process.returncode == returncode, err[-3000:]
    return dict(json.loads(out.strip().splitlines()[-1])) if returncode == 0 else {}


def _run_children(
    environment: Environment,
    count: int,
    action: str,
    seconds: float,
    *extra: str,
    settings_env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    processes = [
        _start_child(environment, action, seconds, *extra, settings_env=settings_env)
        for _ in range(count)
    ]
    return [_outcome(process) for process in processes]


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


def _limiter_state(environment: Environment) -> limiter.LimiterState:
    return limiter.states([environment.pk])[environment.pk]


def _settle(live_emulator: LiveEmulator) -> None:
    """Wait until every request the emulator received has been answered (or abandoned)."""
    for _ in range(200):
        with live_emulator.witness.lock:
            pending = [r for r in live_emulator.witness.arrivals if "end" not in r]
        if not pending:
            return
        time.sleep(0.05)


def test_timed_out_calls_keep_their_slot_until_the_upstream_is_done(
    live_emulator: LiveEmulator,
) -> None:
    environment = make_environment(live_emulator, rate_per_second=10, max_concurrent=2)
    quote = call_sync(upstream(environment).quotations.create, quote_currency="MXN", amount=100)
    live_emulator.witness.clear()
    # Every request now takes 1.5 s upstream while the callers give up after 1 s.
    live_emulator.faults(latency_ms=1500)
    outcomes = _run_children(
        environment,
        3,
        "read",
        6,
        f"quote={quote.quote_id}",
        settings_env={"GATEWAY_READ_TIMEOUT": "1"},
    )
    _settle(live_emulator)
    requests = live_emulator.witness.api_requests()
    assert sum(o["timeouts"] for o in outcomes) >= 3  # the callers really timed out
    # The upstream never had more than its 2 in flight, so it refused nothing.
    assert _max_overlap(requests) <= 2
    assert 429 not in [r["status"] for r in requests]
    assert len(requests) >= 4


def test_a_killed_process_does_not_hold_its_slot_for_long(live_emulator: LiveEmulator) -> None:
    environment = make_environment(live_emulator, max_concurrent=2)  # the upstream allows 2
    Environment.objects.filter(pk=environment.pk).update(max_concurrent=1)  # we allow ourselves 1
    environment.refresh_from_db()
    call_sync(upstream(environment).quotations.create, quote_currency="MXN", amount=100)
    live_emulator.faults(latency_ms=5000)
    victim = _start_child(environment, "once", 0)
    for _ in range(400):  # until its request is in flight upstream
        if live_emulator.witness.arrived("/sandbox/v1/quotations", "POST") >= 2:
            break
        time.sleep(0.05)
    assert live_emulator.witness.arrived("/sandbox/v1/quotations", "POST") == 2
    assert len(_limiter_state(environment).leases) == 1
    victim.kill()
    victim.communicate(timeout=30)
    live_emulator.faults(latency_ms=0)
    # With the old 60 s lease the next caller would give up after its 20 s wait.
    survivor = _outcome(
        _start_child(environment, "once", 0, settings_env={"GATEWAY_LIMITER_WAIT": "20"})
    )
    assert survivor["ok"] == 1 and survivor["budget"] == 0
    assert live_emulator.witness.count("/sandbox/v1/quotations", "POST") >= 2


def test_a_crash_inside_a_transaction_leaves_one_upstream_user(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    # Calling inside transaction.atomic() is refused before anything is sent; the row and its
    # key roll back with the block.
    refused = _outcome(_start_child(sandbox, "user_in_atomic", 0))
    assert "transaction.atomic()" in refused["refused"]
    assert not EndUser.objects.exists()
    # The task: row and key (committed), upstream call, then its own write transaction, killed
    # inside.
    email = "ada.crash@example.com"
    _outcome(
        _start_child(
            sandbox, "user", 0, f"email={email}", settings_env={"CHILD_CRASH_IN_TRANSACTION": "1"}
        ),
        returncode=3,
    )
    rerun = _outcome(_start_child(sandbox, "user", 0, f"email={email}"))
    assert EmulatedUser.objects.filter(email=email).count() == 1
    assert str(EmulatedUser.objects.get(email=email).user_id) == rerun["user_id"]
    keys = list(
        UpstreamCall.objects.filter(operation="user_create").values_list(
            "idempotency_key", flat=True
        )
    )
    # Both attempts are in the call log (the crashed run's row survived), with the same key.
    assert len(keys) == 2 and len(set(keys)) == 1
    with transaction.atomic(), pytest.raises(CalledInTransaction):
        call_sync(upstream(sandbox).quotations.create, quote_currency="MXN", amount=100)
    assert live_emulator.witness.count("/sandbox/v1/quotations") == 0


def test_a_quota_429_fails_at_once_with_the_budget_error(live_emulator: LiveEmulator) -> None:
    environment = make_environment(live_emulator, weekly_quota=2)
    # Another program spends the key's weekly quota: our limiter has seen none of it.
    api_key = environment.api_key
    body = {"client_id": environment.client_id, "password": environment.password}
    for _ in range(2):
        httpx.post(f"{environment.api_root}/auth", json=body, headers={"x-api-key": api_key})
    first, second = _run_children(environment, 2, "once", 0)
    refusals = [r for r in live_emulator.witness.api_requests() if r["status"] == 429]
    # One refusal (days of Retry-After), not waited out nor retried; the other process
    # learned from the shared state and sent nothing.
    assert len(refusals) == 1
    assert [first["budget"], second["budget"]] == [1, 1]
    assert first["codes"] == second["codes"] == ["budget_exhausted"]
    assert _limiter_state(environment).quota_until > time.time() + 3600


def test_the_upstreams_real_rate_is_learned_and_honoured(live_emulator: LiveEmulator) -> None:
    environment = make_environment(live_emulator, rate_per_second=5)  # the upstream: 5/s
    Environment.objects.filter(pk=environment.pk).update(rate_per_second=10)  # we think 10/s
    outcomes = _run_children(environment, 3, "hammer", 4)
    requests = live_emulator.witness.api_requests()
    assert 429 not in [r["status"] for r in requests]
    assert _max_in_any_second([r["start"] for r in requests]) <= 5
    assert all(o["rate_limited"] == 0 for o in outcomes)
    assert len(requests) >= 12  # it kept working at the upstream's pace, not a fifth of it
    assert _limiter_state(environment).learned_rate == 5


def test_a_concurrency_refusal_lowers_the_limit(live_emulator: LiveEmulator) -> None:
    environment = make_environment(live_emulator, max_concurrent=1)  # the upstream: 1 at once
    Environment.objects.filter(pk=environment.pk).update(max_concurrent=2)  # we think 2
    live_emulator.faults(latency_ms=100)
    _run_children(environment, 3, "hammer", 4)
    requests = sorted(live_emulator.witness.api_requests(), key=lambda r: r["start"])
    refused = [i for i, r in enumerate(requests) if r["status"] == 429]
    assert _limiter_state(environment).learned_concurrent == 1
    # Learned from the first refusal(s); none in the later half of the run.
    assert len(refused) <= 3 and all(i < len(requests) // 2 for i in refused), refused
    assert len(requests) >= 10
