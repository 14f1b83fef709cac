"""Webhook receiver: acknowledgement latency, throughput against a bare view, and live latency.

Run: python bench/bench_webhooks.py. Uses DATABASE_URL / REDIS_URL when set, otherwise a temporary
SQLite file (and the in-memory channel layer). Starts the back office (uvicorn, one process) on a
free port with a bare async view that answers 200 beside the real receiver, then:

1. sends BENCH_WEBHOOK_EVENTS (1,000) distinct signed events from 8 concurrent senders to the bare
   view and then to the receiver, each request timed from send to answer;
2. with a staff websocket joined to the event stream, sends BENCH_LIVE_EVENTS events one at a time
   and times each from send to the websocket message naming it.

Processing is queued (django-q2) but no worker runs: the acknowledgement is what is measured.
Last lines: webhook_ack_p50_ms, webhook_ack_p99_ms, webhook_ingest_ratio (receiver throughput /
bare view throughput, same run), webhook_live_p95_ms.
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


async def blast(url: str, items: list[tuple[bytes, dict[str, str]]]) -> tuple[list[float], float]:
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
    from django.test import Client

    from gateway.models import Environment, EnvironmentKind
    from staff import crypto
    from staff.bootstrap import seed_demo_staff
    from staff.roles import roles_sync
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
    client = Client()
    client.force_login(admin)
    name = settings.SESSION_COOKIE_NAME
    return str(endpoint.receiver_id), f"{name}={client.cookies[name].value}"


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
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [
                *[sys.executable, "-m", "uvicorn", "config.asgi:application", "--port", str(port)],
                *["--lifespan", "off", "--log-level", "warning", "--no-access-log"],
            ],
            cwd=ROOT,
            env=env,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the back office did not start")
                time.sleep(0.1)
            receiver = f"{base}/webhooks/in/{receiver_id}/"
            # Warm both paths (imports, connections, first queries).
            asyncio.run(blast(base + "/bench/bare/", signed_events(50, "warm")))
            asyncio.run(blast(receiver, signed_events(50, "warm")))

            bare_latencies, bare_total = asyncio.run(
                blast(base + "/bench/bare/", signed_events(EVENTS, "bare"))
            )
            ack, ack_total = asyncio.run(blast(receiver, signed_events(EVENTS, "ack")))
            live_latencies = asyncio.run(live(base, receiver, cookie))
        finally:
            server.terminate()
            server.wait(timeout=30)
    database = "postgresql" if env.get("DATABASE_URL") else "sqlite"
    print(f"# {EVENTS} events, {SENDERS} senders, {database}, one uvicorn process")
    print(
        f"# bare view: {EVENTS / bare_total:.0f}/s, p50 {statistics.median(bare_latencies):.1f} ms"
    )
    print(f"# receiver: {EVENTS / ack_total:.0f}/s")
    print(f"webhook_ack_p50_ms={statistics.median(ack):.1f}")
    print(f"webhook_ack_p99_ms={percentile(ack, 0.99):.1f}")
    print(f"webhook_ingest_ratio={(EVENTS / ack_total) / (EVENTS / bare_total):.2f}")
    print(f"webhook_live_p95_ms={percentile(live_latencies, 0.95):.1f}")


if __name__ == "__main__":
    main()
