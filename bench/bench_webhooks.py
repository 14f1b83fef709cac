"""Webhook receiver: throughput and p99 against a bare view, nothing lost, 1 and 2 web processes.

Run: python bench/bench_webhooks.py. Uses DATABASE_URL / REDIS_URL when set, otherwise a temporary
SQLite file (and the in-memory channel layer). Starts the back office (uvicorn) on a free port
with a bare async view that answers 200 beside the real receiver, then:

1. one web process: BENCH_ROUNDS (3) interleaved rounds (bare first in odd rounds, the receiver
   first in even ones), each sending BENCH_WEBHOOK_EVENTS (1,000) distinct signed events from 8
   concurrent senders to each, every request timed from send to answer;
2. the same with two web processes (uvicorn --workers 2), bare view measured in the same run;
3. every event the receiver acknowledged is looked up in the database (receiver_lost);
4. with a staff websocket joined to the event stream, BENCH_LIVE_EVENTS events one at a time,
   each timed from send to the websocket message naming it.

No worker runs: the acknowledgement is what is measured. Last lines: receiver_throughput_ratio
(receiver/bare, median of the rounds, with the spread), receiver_p99_ratio (receiver p99 / bare
p99 of the same round, median), receiver_lost, receiver_throughput_1proc / _2proc (events/s,
medians) with the bare view's, webhook_ack_p50_ms, webhook_ack_p99_ms, webhook_live_p95_ms.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from _support import ROOT, environment, free_port, migrate

EVENTS = int(os.environ.get("BENCH_WEBHOOK_EVENTS", "1000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
LIVE_EVENTS = int(os.environ.get("BENCH_LIVE_EVENTS", "200"))
SENDERS = 8
SECRET = "whsec_bench-secret-0123456789abcdef"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def signed_events(count: int, prefix: str) -> list[tuple[bytes, dict[str, str]]]:
    items = []
    for n in range(count):
        body = json.dumps(
            {
                "event": "user.updated",
                "data": {
                    "event_id": f"evt_{prefix}_{uuid.uuid4()}",
                    "user_id": str(uuid.uuid4()),
                    "status": "verified",
                    "verification_status": "verified",
                    "updated_at": "2026-11-21T10:15:30.123Z",
                    "updated_fields": {"phone": f"+1512555{n:04d}"},
                },
            },
            separators=(",", ":"),
        ).encode()
        signature = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        items.append((body, {"content-type": "application/json", "x-signature-sha256": signature}))
    return items


async def blast(
    url: str, items: list[tuple[bytes, dict[str, str]]], acked: list[str] | None = None
) -> tuple[list[float], float]:
    """8 concurrent senders over keep-alive connections; per-request latency and total seconds."""
    queue: asyncio.Queue[tuple[bytes, dict[str, str]]] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=SENDERS, max_keepalive_connections=SENDERS)

    async def sender(client: httpx.AsyncClient) -> None:
        while not queue.empty():
            body, headers = queue.get_nowait()
            started = time.perf_counter()
            response = await client.post(url, content=body, headers=headers)
            latencies.append((time.perf_counter() - started) * 1000)
            if response.status_code != 200:
                raise SystemExit(f"unexpected {response.status_code}: {response.text[:200]}")
            if acked is not None:
                acked.append(json.loads(body)["data"]["event_id"])

    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        started = time.perf_counter()
        await asyncio.gather(*(sender(client) for _ in range(SENDERS)))
        total = time.perf_counter() - started
    return latencies, total


async def live(base: str, receiver: str, cookie: str) -> list[float]:
    import websockets

    items = signed_events(LIVE_EVENTS, "live")
    latencies: list[float] = []
    ws_url = base.replace("http://", "ws://") + "/ws/webhooks/"
    headers = {"Cookie": cookie, "Origin": base}
    async with websockets.connect(ws_url, additional_headers=headers) as socket:
        await socket.send(json.dumps({"action": "join", "group": "events"}))
        joined = json.loads(await socket.recv())
        if joined.get("joined") != "events":
            raise SystemExit(f"could not join the event stream: {joined}")
        async with httpx.AsyncClient(timeout=30) as client:
            for body, headers_ in items:
                event_id = json.loads(body)["data"]["event_id"]
                started = time.perf_counter()
                response = await client.post(receiver, content=body, headers=headers_)
                assert response.status_code == 200, response.text
                while True:
                    message = json.loads(await asyncio.wait_for(socket.recv(), timeout=10))
                    if message.get("event_id") == event_id:
                        break
                latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def setup_data() -> tuple[str, str]:
    """An environment with a receiver endpoint and a signed-in admin's session cookie."""
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings

    from gateway.models import Environment, EnvironmentKind
    from staff import crypto
    from staff.bootstrap import seed_demo_staff
    from staff.roles import roles_sync
    from tests.identity import client_signed_in
    from webhooks.models import WebhookEndpoint

    environment_row = Environment(
        name="Bench", kind=EnvironmentKind.SANDBOX, base_url="http://127.0.0.1:9"
    )
    environment_row.set_credentials(client_id=str(uuid.uuid4()), password="p", api_key="k")
    environment_row.save()
    endpoint = WebhookEndpoint.objects.create(
        environment=environment_row, secret_encrypted=crypto.encrypt(SECRET)
    )
    roles_sync()
    admin = next(u for u in seed_demo_staff() if u.groups.filter(name="admin").exists())
    client = client_signed_in(admin)  # past sign-in's second factor, as a browser would be
    name = settings.SESSION_COOKIE_NAME
    return str(endpoint.receiver_id), f"{name}={client.cookies[name].value}"


def serve(env: dict[str, str], workers: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            *[sys.executable, "-m", "uvicorn", "config.asgi:application", "--port", str(port)],
            *["--lifespan", "off", "--log-level", "warning", "--no-access-log"],
            *["--workers", str(workers)],
        ],
        cwd=ROOT,
        env=env,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return server, base
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            server.terminate()
            raise SystemExit("the back office did not start")
        time.sleep(0.1)


def stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    server.wait(timeout=30)


def rounds(base: str, receiver: str, label: str, acked: list[str]) -> list[dict[str, float]]:
    """Interleaved rounds: each round measures the bare view and the receiver back to back."""
    # Warm both paths (imports, connections, first queries; with 2 processes, both of them).
    asyncio.run(blast(base + "/bench/bare/", signed_events(100, "warm")))
    asyncio.run(blast(receiver, signed_events(100, "warm")))
    results = []
    for number in range(ROUNDS):
        order = ("bare", "receiver") if number % 2 == 0 else ("receiver", "bare")
        measured: dict[str, float] = {}
        for which in order:
            if which == "bare":
                latencies, total = asyncio.run(
                    blast(base + "/bench/bare/", signed_events(EVENTS, "bare"))
                )
            else:
                latencies, total = asyncio.run(
                    blast(receiver, signed_events(EVENTS, f"ack{label}{number}"), acked)
                )
            measured[f"{which}_rate"] = EVENTS / total
            measured[f"{which}_p50"] = statistics.median(latencies)
            measured[f"{which}_p99"] = percentile(latencies, 0.99)
        results.append(measured)
        print(
            f"# {label} round {number + 1} ({' then '.join(order)}): "
            f"bare {measured['bare_rate']:.0f}/s p50 {measured['bare_p50']:.1f} "
            f"p99 {measured['bare_p99']:.1f} ms; receiver {measured['receiver_rate']:.0f}/s "
            f"p50 {measured['receiver_p50']:.1f} p99 {measured['receiver_p99']:.1f} ms; "
            f"ratio {measured['receiver_rate'] / measured['bare_rate']:.2f}",
            flush=True,
        )
    return results


def lost(acked: list[str]) -> int:
    """Acknowledged events that are not in the database."""
    from webhooks.models import WebhookEvent

    stored: set[str] = set()
    for start in range(0, len(acked), 500):
        stored.update(
            WebhookEvent.objects.filter(event_id__in=acked[start : start + 500]).values_list(
                "event_id", flat=True
            )
        )
    return len(set(acked) - stored)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        env["DJANGO_SETTINGS_MODULE"] = "_webhooks_settings"
        env["DJANGO_DEBUG"] = "0"
        env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{ROOT / 'bench'}"
        os.environ.update(env)
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        migrate(env)
        receiver_id, cookie = setup_data()
        acked: list[str] = []
        server, base = serve(env, 1)
        try:
            receiver = f"{base}/webhooks/in/{receiver_id}/"
            one = rounds(base, receiver, "1 process", acked)
            live_latencies = asyncio.run(live(base, receiver, cookie))
        finally:
            stop(server)
        server, base = serve(env, 2)
        try:
            two = rounds(base, f"{base}/webhooks/in/{receiver_id}/", "2 processes", acked)
        finally:
            stop(server)
        missing = lost(acked)
    database = "postgresql + redis" if env.get("DATABASE_URL") else "sqlite"
    print(f"# {EVENTS} events a round, {ROUNDS} rounds, {SENDERS} senders, {database}")
    ratios = [r["receiver_rate"] / r["bare_rate"] for r in one]
    p99_ratios = [r["receiver_p99"] / r["bare_p99"] for r in one]
    two_ratios = [r["receiver_rate"] / r["bare_rate"] for r in two]
    print(f"receiver_throughput_ratio={spread(ratios)}")
    print(f"receiver_p99_ratio={spread(p99_ratios)}")
    print(f"receiver_lost={missing} (of {len(acked)} acknowledged)")
    for label, results in (("1proc", one), ("2proc", two)):
        rate = statistics.median(r["receiver_rate"] for r in results)
        bare = statistics.median(r["bare_rate"] for r in results)
        print(f"receiver_throughput_{label}={rate:.0f}/s (bare view {bare:.0f}/s)")
    print(f"receiver_throughput_ratio_2proc={spread(two_ratios)}")
    print(f"webhook_ack_p50_ms={statistics.median(r['receiver_p50'] for r in one):.1f}")
    print(f"webhook_ack_p99_ms={statistics.median(r['receiver_p99'] for r in one):.1f}")
    print(f"webhook_live_p95_ms={percentile(live_latencies, 0.95):.1f}")


if __name__ == "__main__":
    main()
