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
   each timed from send to the websocket message naming it;
5. with a real qcluster (whose workers run the event processors), BENCH_PROCESSING_EVENTS (50)
   events one at a time, each timed from its acknowledgement to its status leaving `pending`.

No worker runs during 1-4: the acknowledgement is what is measured. Last lines:
receiver_throughput_ratio
(receiver/bare, median of the rounds, with the spread), receiver_p99_ratio (receiver p99 / bare
p99 of the same round, median), receiver_lost, receiver_throughput_1proc / _2proc (events/s,
medians) with the bare view's, webhook_ack_p50_ms, webhook_ack_p99_ms, webhook_live_p95_ms,
webhook_processing_p50_ms / _p95_ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import signal
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
CHUNKS = int(os.environ.get("BENCH_CHUNKS", "5"))
PROCESSING_EVENTS = int(os.environ.get("BENCH_PROCESSING_EVENTS", "50"))
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


def server_cpu_seconds(server: subprocess.Popen[bytes]) -> float:
    """CPU (user + system) used so far by the server and its worker processes (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    pids = [server.pid]
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{server.pid}/task"):
            with open(f"/proc/{server.pid}/task/{task}/children") as children:
                pids.extend(int(pid) for pid in children.read().split())
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def rounds(
    server: subprocess.Popen[bytes], base: str, receiver: str, label: str, acked: list[str]
) -> list[dict[str, float]]:
    """Interleaved rounds. Each round alternates CHUNKS slices of the bare view's and the
    receiver's events (bare first in odd rounds), so that the host's load, which drifts by the
    second here, falls on both alike; per side: events/s over its own sending time, p50, p99,
    and the server's CPU milliseconds per request."""
    # Warm both paths (imports, connections, first queries; with 2 processes, both of them).
    asyncio.run(blast(base + "/bench/bare/", signed_events(100, "warm")))
    asyncio.run(blast(receiver, signed_events(100, "warm")))
    results = []
    size = max(1, EVENTS // CHUNKS)
    for number in range(ROUNDS):
        order = ("bare", "receiver") if number % 2 == 0 else ("receiver", "bare")
        latencies: dict[str, list[float]] = {"bare": [], "receiver": []}
        seconds = {"bare": 0.0, "receiver": 0.0}
        cpu = {"bare": 0.0, "receiver": 0.0}
        for chunk in range(CHUNKS):
            for which in order:
                before = server_cpu_seconds(server)
                if which == "bare":
                    got, total = asyncio.run(
                        blast(base + "/bench/bare/", signed_events(size, "bare"))
                    )
                else:
                    items = signed_events(size, f"ack{label}{number}-{chunk}")
                    got, total = asyncio.run(blast(receiver, items, acked))
                cpu[which] += server_cpu_seconds(server) - before
                latencies[which].extend(got)
                seconds[which] += total
        measured: dict[str, float] = {}
        for which in order:
            measured[f"{which}_rate"] = len(latencies[which]) / seconds[which]
            measured[f"{which}_p50"] = statistics.median(latencies[which])
            measured[f"{which}_p99"] = percentile(latencies[which], 0.99)
            measured[f"{which}_cpu_ms"] = cpu[which] * 1000 / len(latencies[which])
        results.append(measured)
        print(
            f"# {label} round {number + 1} ({' first, '.join(order)} second): "
            f"bare {measured['bare_rate']:.0f}/s p50 {measured['bare_p50']:.1f} "
            f"p99 {measured['bare_p99']:.1f} ms cpu {measured['bare_cpu_ms']:.2f} ms/req; "
            f"receiver {measured['receiver_rate']:.0f}/s p50 {measured['receiver_p50']:.1f} "
            f"p99 {measured['receiver_p99']:.1f} ms cpu {measured['receiver_cpu_ms']:.2f} ms/req; "
            f"ratio {measured['receiver_rate'] / measured['bare_rate']:.2f}",
            flush=True,
        )
    return results


def processing_latencies(env: dict[str, str], receiver: str) -> list[float]:
    """With a real qcluster (its workers run the event processors): each event sent alone, timed
    from the acknowledgement to its status leaving `pending` in the database."""
    from webhooks.models import EventStatus, WebhookEvent

    # The throughput rounds left their events pending (no worker ran): processors take the
    # oldest first, so that backlog (each user.updated tries the unreachable upstream) would be
    # what is timed. It is set aside; only the events sent below are pending.
    WebhookEvent.objects.filter(status=EventStatus.PENDING).update(status=EventStatus.UNHANDLED)
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env={**env, "PAYOPS_Q_NAME": f"bench-{uuid.uuid4().hex[:8]}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    latencies: list[float] = []
    try:
        time.sleep(8)  # the cluster's workers start (and their processors take a first look)
        with httpx.Client(timeout=30) as client:
            for n in range(PROCESSING_EVENTS):
                event_id = f"evt_proc_{uuid.uuid4()}"
                body = json.dumps(
                    {
                        "event": "card_payment",
                        "data": {
                            "event_id": event_id,
                            "payment_link_id": f"pl_{n}",
                            "client_uuid": str(uuid.uuid4()),
                            "reference": f"bench-{n}",
                            "status": "completed",
                        },
                    },
                    separators=(",", ":"),
                ).encode()
                signature = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
                headers = {"content-type": "application/json", "x-signature-sha256": signature}
                response = client.post(receiver, content=body, headers=headers)
                acked = time.perf_counter()
                assert response.status_code == 200, response.text
                deadline = acked + 30
                while WebhookEvent.objects.filter(
                    event_id=event_id, status=EventStatus.PENDING
                ).exists():
                    if time.perf_counter() > deadline:
                        raise SystemExit("an event was not processed within 30 s")
                    time.sleep(0.002)
                latencies.append((time.perf_counter() - acked) * 1000)
                time.sleep(0.05)
    finally:
        stopped = time.perf_counter()
        worker.terminate()  # the cluster's own shutdown, as `make run` stops it
        try:
            worker.wait(timeout=60)
            print(f"# qcluster stopped in {time.perf_counter() - stopped:.1f} s", flush=True)
        except subprocess.TimeoutExpired:
            print("# qcluster did not stop within 60 s of SIGTERM: killed", flush=True)
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    if latencies:
        print(
            f"# processing: p50 {statistics.median(latencies):.1f} ms, "
            f"p95 {percentile(latencies, 0.95):.1f} ms",
            flush=True,
        )
    return latencies


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
            one = rounds(server, base, receiver, "1 process", acked)
            live_latencies = asyncio.run(live(base, receiver, cookie))
            processed = processing_latencies(env, receiver) if PROCESSING_EVENTS else []
        finally:
            stop(server)
        server, base = serve(env, 2)
        try:
            two = rounds(server, base, f"{base}/webhooks/in/{receiver_id}/", "2 processes", acked)
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
    cpu_ratios = [r["bare_cpu_ms"] / r["receiver_cpu_ms"] for r in one]
    print(f"receiver_cpu_ratio={spread(cpu_ratios)} (bare CPU per request / receiver's)")
    print(f"receiver_lost={missing} (of {len(acked)} acknowledged)")
    for label, results in (("1proc", one), ("2proc", two)):
        rate = statistics.median(r["receiver_rate"] for r in results)
        bare = statistics.median(r["bare_rate"] for r in results)
        print(f"receiver_throughput_{label}={rate:.0f}/s (bare view {bare:.0f}/s)")
    print(f"receiver_throughput_ratio_2proc={spread(two_ratios)}")
    print(f"webhook_ack_p50_ms={statistics.median(r['receiver_p50'] for r in one):.1f}")
    print(f"webhook_ack_p99_ms={statistics.median(r['receiver_p99'] for r in one):.1f}")
    print(f"webhook_live_p95_ms={percentile(live_latencies, 0.95):.1f}")
    if processed:
        print(f"webhook_processing_p50_ms={statistics.median(processed):.1f}")
        print(f"webhook_processing_p95_ms={percentile(processed, 0.95):.1f}")


if __name__ == "__main__":
    main()
