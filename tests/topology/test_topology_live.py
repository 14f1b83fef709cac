"""Production settings on several processes: 2 web, 2 task workers, PostgreSQL, Redis, S3.

The back office runs as it would in production (config.settings.production, no emulator
installed): two uvicorn processes, two `manage.py qcluster` processes on the Redis broker, files in
an S3-compatible bucket (moto's server). The emulator runs as its own process and is the upstream
environment, as any upstream is: created with its base URL and credentials, its webhook receiver
registered through the webhooks service.

A payout goes from draft to completed over the API, the requests spread over both web processes
(a client that meets a dead process tries the other, as a load balancer does), its supporting
document uploaded through one and read back through the other. Right after the release, while
the initiation, the upstream's payout events and a burst of user events are in flight, one web
process and one worker are SIGKILLed. The web process is restarted (a process manager's job);
the worker is not. Then: the upstream made the payout exactly once and PayOps shows it
completed, with one timeline entry per state; every event the upstream delivered is stored once
and processed once, and every end user it announced is mirrored once; nothing is left pending or
submitting.

A task a killed worker held is gone with it (django-q2's Redis broker has no acknowledgement):
the product recovers it with its schedules (payouts.recover_submitting re-sends a stale
`submitting` payout with the same idempotency key, webhooks.retry_due re-runs stale pending
events). Those run every minute, past a staleness threshold of minutes; to stay within the test's
time the test runs the same two functions itself, once, with the threshold taken as passed, after
giving the surviving processes 15 s to finish on their own.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import os
import secrets
import time
import uuid
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.topology import processes as procs

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

CONTROL_TOKEN = "topology-" + secrets.token_hex(8)
BURST = 24
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n% topology " + secrets.token_bytes(8)


class Control:
    """The emulator's control API (the truth about what the upstream did)."""

    def __init__(self, url: str) -> None:
        self.client = httpx.Client(
            base_url=f"{url}/_control/", headers={"X-Emulator-Token": CONTROL_TOKEN}, timeout=30
        )

    def __call__(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.client.request(method, path, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else {}


class Api:
    """/api/v1 with a bearer token, round-robin over the web processes; a refused connection
    (a dead process) goes to the next one, as a load balancer's retry would."""

    def __init__(self, webs: list[procs.Process], token: str) -> None:
        self.webs = webs
        self.headers = {"Authorization": f"Bearer {token}"}
        self.turn = itertools.count()

    def __call__(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        last: Exception | None = None
        for _ in range(2 * len(self.webs)):
            web = self.webs[next(self.turn) % len(self.webs)]
            try:
                return httpx.request(
                    method,
                    f"{web.url}/api/v1{path}",
                    headers=self.headers,
                    timeout=30,
                    **kwargs,
                )
            except httpx.ConnectError as exc:  # nothing was sent: safe to send elsewhere
                last = exc
        raise AssertionError(f"no web process answered {method} {path}: {last}")


def database_url(settings: Any) -> str:
    db = settings.DATABASES["default"]
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}{port}/{db['NAME']}"


@pytest.fixture
def topology(transactional_db: None, tmp_path: Path, settings: Any) -> Iterator[dict[str, Any]]:
    """S3, the emulator, 2 web processes and 2 workers on production settings; all killed after."""
    import boto3

    t0 = time.monotonic()
    logs = tmp_path / "logs"
    logs.mkdir()
    ports: set[int] = set()
    tag = secrets.token_hex(4)
    started: list[procs.Process] = []
    try:
        s3 = procs.s3_server(procs.free_port(ports), logs).start()
        started.append(s3)
        # The upstream: the emulator on its own settings and its own (SQLite) database.
        base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL",)}
        emulator_env = {
            **base,
            "DJANGO_SETTINGS_MODULE": "config.settings.emulator",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(32),
            "EMULATOR_CONTROL_TOKEN": CONTROL_TOKEN,
            "PAYOPS_SQLITE_PATH": str(tmp_path / "emulator-host.sqlite3"),
            "EMULATOR_SQLITE_PATH": str(tmp_path / "emulator.sqlite3"),
            "PAYOPS_CACHE_PREFIX": f"topo-emu-{tag}",
            "PAYOPS_CHANNELS_PREFIX": f"topo-emu-{tag}",
            "EMULATOR_PAYOUT_STEP_SECONDS": "1",
            "EMULATOR_WEBHOOK_RETRY_DELAYS": "1,2,4,8,16,32",
            "PAYOPS_LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
        bucket = f"payops-topology-{tag}"
        production_env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(48),
            "DATABASE_URL": database_url(settings),
            "DATABASE_POOL_MAX": "5",
            "REDIS_URL": settings.REDIS_URL,
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            # The test process wrote the environment's credentials: the same keys read them.
            "PAYOPS_ENCRYPTION_KEYS": ",".join(settings.PAYOPS_ENCRYPTION_KEYS),
            "DJANGO_SECURE_SSL_REDIRECT": "false",
            "EMAIL_URL": "consolemail://",
            # This run's own queue, cache and channel names in a Redis others may share.
            "PAYOPS_Q_NAME": f"topology-{tag}",
            "PAYOPS_Q_WORKERS": "1",
            "PAYOPS_CACHE_PREFIX": f"topo-{tag}",
            "PAYOPS_CHANNELS_PREFIX": f"topo-{tag}",
            "PAYOPS_S3_BUCKET": bucket,
            "PAYOPS_S3_ENDPOINT_URL": s3.url,
            "PAYOPS_S3_REGION": "us-east-1",
            "PAYOPS_S3_ACCESS_KEY_ID": "topology",
            "PAYOPS_S3_SECRET_ACCESS_KEY": "topology-secret",
            "PAYOPS_S3_ADDRESSING_STYLE": "path",
            "PAYOPS_LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
        storage_settings = {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": bucket,
                "endpoint_url": s3.url,
                "region_name": "us-east-1",
                "access_key": "topology",
                "secret_key": "topology-secret",
                "addressing_style": "path",
            },
        }
        webs = [procs.web(f"web-{n}", procs.free_port(ports), production_env, logs) for n in (1, 2)]
        workers = [procs.worker(f"worker-{n}", production_env, logs) for n in (1, 2)]
        for process in (*webs, *workers):
            started.append(process.start())
        # The emulator's database is migrated while the back office's processes start.
        procs.run(
            procs.python("manage.py", "migrate", "--database", "emulator", "--noinput", "-v", "0"),
            emulator_env,
        )
        upstream = procs.emulator(procs.free_port(ports), emulator_env, logs).start()
        started.append(upstream)

        s3.wait_healthy("/moto-api/")
        client = boto3.client(
            "s3",
            endpoint_url=s3.url,
            region_name="us-east-1",
            aws_access_key_id="topology",
            aws_secret_access_key="topology-secret",
        )
        client.create_bucket(Bucket=bucket)
        upstream.wait_healthy()
        for web in webs:
            web.wait_healthy()
        yield {
            "storage": storage_settings,
            "t0": t0,
            "s3": client,
            "bucket": bucket,
            "emulator": upstream,
            "control": Control(upstream.url),
            "webs": webs,
            "workers": workers,
            "logs": logs,
        }
    finally:
        for process in reversed(started):
            process.kill()
        # This run's queue, cache and channel keys leave the shared Redis with it.
        import redis

        connection = redis.Redis.from_url(settings.REDIS_URL)
        for pattern in (f"*topology-{tag}*", f"*topo-{tag}*", f"*topo-emu-{tag}*"):
            for key in connection.scan_iter(match=pattern, count=500):
                connection.delete(key)
        for log in sorted(logs.glob("*.log")):
            text = log.read_text(errors="replace")
            if "Traceback" in text:
                print(f"--- {log.name} (last lines)\n" + "\n".join(text.splitlines()[-30:]))


def upstream_environment(control: Control, url: str) -> Any:
    """The emulator as an ordinary upstream environment: its base URL and a client's credentials."""
    from django.utils import timezone

    from gateway.models import Environment, EnvironmentKind

    credentials = control(
        "POST", "clients", json={"name": "topology", "rate_per_second": 200, "max_concurrent": 20}
    )
    environment = Environment(
        name="Topology",
        kind=EnvironmentKind.SANDBOX,
        base_url=url,
        rate_per_second=200,
        max_concurrent=20,
        weekly_budget=1_000_000,
        verification_email="otp-topology@payops.test",
    )
    environment.set_credentials(**credentials)
    environment.verified_at = timezone.now()
    environment.save()
    return environment, credentials["client_id"]


def wait_until(what: str, check: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_payout_and_a_webhook_burst_survive_a_killed_web_process_and_worker(
    topology: dict[str, Any], settings: Any
) -> None:
    from django.utils import timezone

    from gateway.client import call_sync, upstream
    from payouts.models import Payout, PayoutStatus, PayoutStatusChange
    from payouts.release.initiation import payouts_recover_submitting
    from staff.api_tokens import api_token_create
    from staff.roles import FINANCE_APPROVER, FINANCE_MAKER
    from tests.finance import make_staff
    from tests.identity import stepped_up
    from tests.payouts.live import build_world
    from users.models import EndUser
    from webhooks.models import WebhookEvent
    from webhooks.services import webhook_endpoint_register, webhook_events_retry_due
    from webhooks.services.processing import STALE_PENDING

    print(f"topology: processes up in {time.monotonic() - topology['t0']:.1f}s")
    control: Control = topology["control"]
    webs: list[procs.Process] = topology["webs"]
    workers: list[procs.Process] = topology["workers"]
    started = time.monotonic()

    maker = make_staff(FINANCE_MAKER.key)
    approver = make_staff(FINANCE_APPROVER.key)
    environment, client_id = upstream_environment(control, topology["emulator"].url)
    world = build_world(_Emulator(control), environment, recipient_creator=maker)
    # The receiver, registered through the product's own service, at the first web process.
    webhook_endpoint_register(environment=environment, by=None, base_url=webs[0].url)
    maker_api = Api(webs, api_token_create(user=maker, name="topology").plaintext)
    approver_api = Api(
        webs,
        api_token_create(
            user=approver, name="topology", scopes=("read", "approve"), by=stepped_up(approver)
        ).plaintext,
    )
    query = {"environment": environment.name}

    # Draft -> document -> submitted -> approved -> code sent -> code confirmed (initiation).
    reference = f"TOPO-{uuid.uuid4().hex[:8]}"
    draft = maker_api(
        "POST",
        "/payouts",
        params=query,
        json={
            "virtual_account_id": str(world.account.pk),
            "recipient_id": str(world.recipient.pk),
            "amount": "125.00",
            "reference": reference,
        },
    )
    assert draft.status_code in (200, 201), draft.text
    payout_id = draft.json()["id"]
    uploaded = maker_api(
        "POST",
        f"/payouts/{payout_id}/documents",
        params=query,
        files={"file": ("invoice.pdf", PDF, "application/pdf")},
    )
    assert uploaded.status_code == 201, uploaded.text
    document_id = uploaded.json()["id"]
    for path, api in (
        ("preview", maker_api),
        ("submit", maker_api),
        ("approve", approver_api),
        ("otp/send", approver_api),
    ):
        answer = api("POST", f"/payouts/{payout_id}/{path}", params=query, json={})
        assert answer.status_code == 200, (path, answer.text)
    code = control("GET", "mailbox", params={"email": environment.verification_email})
    confirmed = approver_api(
        "POST",
        f"/payouts/{payout_id}/otp/confirm",
        params=query,
        json={"code": str(code["messages"][0]["code"])},
    )
    assert confirmed.status_code == 202, confirmed.text

    # The burst: the upstream announces BURST new end users while the payout is under way...
    gateway = upstream(environment)
    announced = []
    for n in range(BURST):
        if n == BURST // 3:
            # ...and mid-way one web process (the receiver's) and one worker die.
            webs[0].kill()
            workers[0].kill()
            webs[0].start()
        user = call_sync(
            gateway.users.create,
            idempotency_key=str(uuid.uuid4()),
            email=f"burst-{n}-{uuid.uuid4().hex[:6]}@example.com",
            phone_number="+15125550100",
            first_name="Burst",
            last_name=f"User{n}",
            country="US",
        )
        announced.append(user.user_id)
    webs[0].wait_healthy()
    assert not workers[0].alive and workers[1].alive and all(w.alive for w in webs)

    # The survivors (and the restarted web process) carry on; then the schedules' recovery.
    def settled() -> bool:
        payout = Payout.objects.get(pk=payout_id)
        return payout.status == PayoutStatus.COMPLETED and EndUser.objects.filter(
            environment=environment, upstream_id__in=announced
        ).count() == len(announced)

    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not settled():
        time.sleep(0.5)
    print(f"topology: settled by itself: {settled()} at {time.monotonic() - started:.1f}s")
    # One pass of the two recovery schedules, as a worker runs them once work is stale (this
    # process stands in for it, with the same bucket as the rest): what the killed worker held is
    # done now; what the survivors already did is left alone.
    settings.STORAGES = {**settings.STORAGES, "default": topology["storage"]}
    settings.PAYOUTS_SUBMITTING_STALE_SECONDS = 0
    resent = payouts_recover_submitting()
    rerun = webhook_events_retry_due(now=timezone.now() + STALE_PENDING)
    print(f"topology: the recovery pass re-sent {resent} payout(s), re-ran {rerun} event(s)")

    def quiet() -> bool:
        return (
            settled()
            and not WebhookEvent.objects.filter(environment=environment)
            .exclude(status="processed")
            .exists()
        )

    wait_until("the payout completed, every user mirrored, every event processed", quiet, 30)
    time.sleep(2)  # deliveries still on their way (the payout's last events) land and are done
    wait_until("the late events processed", quiet, 15)

    # The upstream made the payout exactly once.
    made = call_sync(gateway.payouts.list, limit=100).payouts
    ours = [p for p in made if p.model_dump(mode="json").get("reference") == reference]
    assert len(ours) == 1, [p.model_dump(mode="json") for p in made]
    payout = Payout.objects.get(pk=payout_id)
    assert payout.upstream_id == ours[0].model_dump(mode="json")["payout_id"]
    assert payout.status == PayoutStatus.COMPLETED
    moves = Counter(
        PayoutStatusChange.objects.filter(payout=payout).values_list("to_status", flat=True)
    )
    assert moves[PayoutStatus.COMPLETED] == 1 and moves[PayoutStatus.SUBMITTING] == 1, moves
    assert not Payout.objects.filter(status=PayoutStatus.SUBMITTING).exists()

    # Every end user announced is mirrored once.
    mirrored = Counter(
        EndUser.objects.filter(environment=environment, upstream_id__in=announced).values_list(
            "upstream_id", flat=True
        )
    )
    assert mirrored == Counter(announced)

    # The burst itself: one stored user.created per end user announced.
    created = Counter(
        event.payload["data"].get("user_id")
        for event in WebhookEvent.objects.filter(environment=environment, event_type="user.created")
    )
    assert all(created[user_id] == 1 for user_id in announced), created

    # Every event the upstream delivered (2xx) is stored once and processed once.
    log = control("GET", "webhooks/deliveries", params={"client_id": client_id})["deliveries"]
    delivered = {d["event_id"] for d in log if d["status_code"] and 200 <= d["status_code"] < 300}
    failed_attempts = [d for d in log if not (d["status_code"] and d["status_code"] < 300)]
    assert delivered, log
    stored = Counter(
        WebhookEvent.objects.filter(environment=environment).values_list("event_id", flat=True)
    )
    assert set(stored) >= delivered
    assert all(count == 1 for count in stored.values()), stored
    events = WebhookEvent.objects.filter(environment=environment)
    assert sorted({e.status for e in events}) == ["processed"], Counter(e.status for e in events)
    for event in events:
        successes = [a for a in event.attempt_log.all() if a.outcome == "processed"]
        assert len(successes) == 1, (event.event_id, list(event.attempt_log.values()))

    # The document lives in the bucket, not on any process's disk, and reads back whole through
    # the other web process, permission-checked and audited.
    keys = [
        item["Key"]
        for item in topology["s3"].list_objects_v2(Bucket=topology["bucket"]).get("Contents", [])
    ]
    assert len(keys) == 1, keys
    body = approver_api("GET", f"/payouts/{payout_id}/documents/{document_id}/content")
    assert (
        body.status_code == 200
        and hashlib.sha256(body.content).digest() == hashlib.sha256(PDF).digest()
    )
    assert not (Path(settings.MEDIA_ROOT) / keys[0]).exists()
    # The evidence pack, built by a web process from the bucket's copy, holds the same bytes.
    pack = approver_api("GET", f"/payouts/{payout_id}/evidence")
    assert pack.status_code == 200, pack.text[:500]
    with zipfile.ZipFile(io.BytesIO(pack.content)) as archive:
        documents = [name for name in archive.namelist() if name.startswith("documents/")]
        assert len(documents) == 1, archive.namelist()
        assert archive.read(documents[0]) == PDF

    triggers = Counter(
        a.trigger for e in events for a in e.attempt_log.all() if a.outcome == "processed"
    )
    print(
        f"topology: {time.monotonic() - started:.1f}s; {len(delivered)} events delivered, "
        f"{len(failed_attempts)} delivery attempts failed (the killed web process); "
        f"processed on {dict(triggers)}"
    )


class _Emulator:
    """What tests.payouts.live.build_world asks of an emulator: control calls and the clock."""

    def __init__(self, control: Control) -> None:
        self.control = control

    def advance(self, seconds: float) -> None:
        self.control("POST", "clock", json={"advance_seconds": seconds})
