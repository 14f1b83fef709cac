"""Share of the allowed upstream rate the gateway uses from 3 processes; 429s reaching callers.

Run: python bench/bench_gateway_rate.py. Uses DATABASE_URL / REDIS_URL when set (the limiter then
lives in PostgreSQL / Redis), otherwise a temporary SQLite file. Starts the emulator (uvicorn, its
own process) on a free port, creates an emulator client and a sandbox environment limited to
10 requests/s and 2 at once, then runs 3 processes calling GET quotation through the gateway as
fast as it lets them for BENCH_DURATION seconds (default 20). The emulator's own count of admitted
requests is the witness. Last lines: gateway_rate_share=<x>, gateway_caller_429=<n>."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import time

import httpx
from _support import (
    ROOT,
    django_setup,
    environment,
    free_port,
    migrate,
    start_emulator,
    wait_healthy,
)

DURATION = float(os.environ.get("BENCH_DURATION", "20"))
RATE = 10
CONCURRENT = 2
PROCESSES = 3


def worker(environment_id: int, quote_id: str, start_at: float, stop_at: float) -> None:
    """One process: GET the quote through the gateway until stop_at; print what callers saw."""
    django_setup()
    from gateway.client import call_sync, upstream
    from gateway.errors import RateLimited, UpstreamError
    from gateway.models import Environment

    client = upstream(Environment.objects.get(pk=environment_id))
    seen: dict[str, float] = {"ok": 0, "caller_429": 0, "other_errors": 0, "last_end": start_at}
    time.sleep(max(0.0, start_at - time.time()))
    while time.time() < stop_at:
        try:
            call_sync(client.quotations.get, quote_id)
            seen["ok"] += 1
        except RateLimited:
            seen["caller_429"] += 1
        except UpstreamError:
            seen["other_errors"] += 1
        seen["last_end"] = time.time()
    print(json.dumps(seen), flush=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        os.environ.update(env)
        migrate(env)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        emulator = start_emulator(port, env)
        try:
            wait_healthy(url, emulator)
            run(url, env)
        finally:
            emulator.terminate()
            emulator.wait(timeout=20)


def run(url: str, env: dict[str, str]) -> None:
    django_setup()
    from django.db.models import Sum

    from emulator.models import WeeklyUsage
    from gateway.client import call_sync, upstream
    from gateway.models import Environment, UpstreamCall

    control = {"X-Emulator-Token": env["EMULATOR_CONTROL_TOKEN"]}
    credentials = httpx.post(
        f"{url}/_control/clients",
        json={"name": "bench-gateway", "rate_per_second": RATE, "max_concurrent": CONCURRENT},
        headers=control,
        timeout=10,
    ).json()
    environment = Environment(
        name=f"bench-gateway-{secrets.token_hex(4)}",
        kind="sandbox",
        base_url=url,
        rate_per_second=RATE,
        max_concurrent=CONCURRENT,
        weekly_budget=1_000_000,
    )
    environment.set_credentials(
        client_id=credentials["client_id"],
        password=credentials["password"],
        api_key=credentials["api_key"],
    )
    environment.save()
    try:
        quote = call_sync(upstream(environment).quotations.create, quote_currency="MXN", amount=100)
        time.sleep(1.5)  # the setup calls leave the rate window before the clock starts

        def admitted() -> int:
            total = WeeklyUsage.objects.aggregate(n=Sum("count"))["n"]
            return int(total or 0)

        before = admitted()
        start_at = time.time() + 3  # time for the workers to import Django
        stop_at = start_at + DURATION
        workers = [
            subprocess.Popen(
                [
                    *[python_path(), __file__, "worker", str(environment.pk), quote.quote_id],
                    *[str(start_at), str(stop_at)],
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(PROCESSES)
        ]
        results = []
        for process in workers:
            out, _ = process.communicate(timeout=DURATION + 120)
            results.append(json.loads(out.strip().splitlines()[-1]))
        used = admitted() - before
        upstream_429 = UpstreamCall.objects.filter(environment=environment, status=429).count()
        caller_429 = sum(r["caller_429"] for r in results)
        ok = sum(r["ok"] for r in results)
        # The calls a worker started just before stop_at finish after it: measure the share over
        # the span the calls really took, so that edge never inflates the figure.
        span = max(r["last_end"] for r in results) - start_at
        share = used / (RATE * span)
        print(f"# {PROCESSES} processes, {DURATION:g}s, limits {RATE}/s and {CONCURRENT} at once")
        print(f"# calls answered to callers: {ok}; admitted upstream: {used} in {span:.2f}s")
        print(f"gateway_upstream_429={upstream_429}")
        print(f"gateway_rate_share={share:.3f}")
        print(f"gateway_caller_429={caller_429}")
    finally:
        environment.delete()


def python_path() -> str:
    return sys.executable


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        worker(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
    else:
        main()
