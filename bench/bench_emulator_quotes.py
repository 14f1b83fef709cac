"""Quote creations per second of the emulator over real HTTP, at concurrency 2 and 8.

Run: python bench/bench_emulator_quotes.py. Uses DATABASE_URL when set, otherwise a temporary
SQLite file; migrates it, starts the emulator (uvicorn, its own process) on a free port, creates
an API client whose limits are raised out of the way, then creates quotes for DURATION seconds
per concurrency level and prints emulator_quotes_rps_c2, emulator_quotes_rps_c8, c8_over_c2."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time

import httpx
from _support import ROOT, environment, free_port, wait_healthy

DURATION = float(os.environ.get("BENCH_DURATION", "5"))


async def load(
    url: str, headers: dict[str, str], concurrency: int, duration: float = DURATION
) -> float:
    body = {"quote_currency": "MXN", "amount": 100}
    done = 0
    failures = 0
    stop_at = time.monotonic() + duration

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal done, failures
        while time.monotonic() < stop_at:
            response = await client.post("/sandbox/v1/quotations", json=body, headers=headers)
            if response.status_code == 201:
                done += 1
            else:
                failures += 1

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as client:
        started = time.monotonic()
        await asyncio.gather(*[worker(client) for _ in range(concurrency)])
        elapsed = time.monotonic() - started
    if failures:
        print(f"# concurrency {concurrency}: {failures} non-201 answers", file=sys.stderr)
    return done / elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        python = sys.executable
        for database in ("default", "emulator"):
            subprocess.run(
                [python, "manage.py", "migrate", "--database", database, "--noinput", "-v", "0"],
                cwd=ROOT,
                env=env,
                check=True,
            )
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        process = subprocess.Popen(
            [python, "-m", "uvicorn", "emulator.asgi:application", "--host", "127.0.0.1",
             "--port", str(port), "--lifespan", "off", "--log-level", "warning",
             "--no-access-log"],
            cwd=ROOT,
            env=env,
        )  # fmt: skip
        try:
            wait_healthy(url, process)
            control = {"X-Emulator-Token": env["EMULATOR_CONTROL_TOKEN"]}
            creds = httpx.post(
                url + "/_control/clients",
                json={"name": "bench", "rate_per_second": 10**6, "max_concurrent": 10**4,
                      "weekly_quota": 10**9},
                headers=control,
            ).json()  # fmt: skip
            token = httpx.post(
                url + "/sandbox/auth",
                json={"client_id": creds["client_id"], "password": creds["password"]},
                headers={"x-api-key": creds["api_key"]},
            ).json()["data"]["access_token"]
            headers = {"x-api-key": creds["api_key"], "Authorization": f"Bearer {token}"}
            asyncio.run(load(url, headers, 2, duration=1.0))  # warm-up, not reported
            rps_c2 = asyncio.run(load(url, headers, 2))
            rps_c8 = asyncio.run(load(url, headers, 8))
        finally:
            process.terminate()
            process.wait(timeout=30)
    print(f"emulator_quotes_rps_c2={rps_c2:.1f}")
    print(f"emulator_quotes_rps_c8={rps_c8:.1f}")
    print(f"c8_over_c2={rps_c8 / rps_c2:.2f}")


if __name__ == "__main__":
    main()
