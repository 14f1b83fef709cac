"""From the release of a payout to the upstream receiving its initiation, with a real worker.

Run: python bench/bench_release_to_call.py. Each configuration runs in a child process with its
own world (copies of one migrated SQLite template, the emulator under uvicorn behind a recorder,
a real `manage.py qcluster` worker), kept alive for the whole run. The children release fiat
payouts the way an approver does (approved, code sent, code confirmed), one at a time, in
interleaved rounds: BENCH_ROUNDS rounds (default 3), and in each round every configuration
releases BENCH_RELEASES / BENCH_ROUNDS payouts (BENCH_RELEASES default 30). A sample runs from
the commit of the confirmation (an on_commit hook registered before the service's own) to the
emulator receiving the initiation request (`bench/_arrivals.py` writes the arrival time of every
`POST …/payout`, matched by the payout's idempotency key). Each child first releases two
payouts that are not counted (the worker's first task imports the code and opens connections).

Configurations:
- `baseline`: the embedded default as it was, django-q2's ORM broker polling every second
  (PAYOPS_Q_WAKE_UP=false, PAYOPS_Q_POLL=1): the yardstick of the same run;
- `embedded`: the embedded default (SQLite, the ORM broker woken by each queued task);
- `redis`: SQLite with Redis for the broker, cache and channel layer (BENCH_REDIS_URL, default
  redis://127.0.0.1:6379/6, flushed first; skipped when it does not answer).

Last lines: release_to_call_p50_ms / _p95_ms (embedded), release_to_call_redis_p50_ms / _p95_ms,
the baseline's, the ratios embedded / baseline, and release_to_call_samples; comment lines give
each configuration's round medians (the spread) and where the time went (median stages: commit
to the task starting, the task to its call-log row, that row to the upstream receiving it).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from _support import ROOT, free_port, migrate, wait_healthy

RELEASES = int(os.environ.get("BENCH_RELEASES", "30"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
WARMUP = 2
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/6")
# Bounded: a release whose initiation has not arrived by then ends the run.
ARRIVAL_TIMEOUT = 20.0
STAGES = ("to_task_ms", "task_to_call_ms", "call_to_arrival_ms")


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (p95 of 30 samples is the 29th smallest)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(share * len(ordered) + 0.5)))
    return ordered[rank - 1]


# --- parent -------------------------------------------------------------------------------------


def redis_answers(url: str) -> bool:
    try:
        import redis

        client = redis.Redis.from_url(url, socket_connect_timeout=1)
        client.ping()
        client.flushdb()  # this benchmark's own index: start clean
        return True
    except Exception:  # any failure means "no Redis here"
        return False


class Child:
    """One configuration's world in its own process, releasing payouts when asked (stdin)."""

    def __init__(self, name: str, template: Path, tmp: Path, extra: dict[str, str]) -> None:
        self.name = name
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        for db in ("payops", "emulator"):
            shutil.copy(template / f"{db}.sqlite3", tmp / f"{name}-{db}.sqlite3")
        env |= {
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "PAYOPS_LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
            "EMULATOR_CONTROL_TOKEN": secrets.token_urlsafe(16),
            "PAYOPS_SQLITE_PATH": str(tmp / f"{name}-payops.sqlite3"),
            "EMULATOR_SQLITE_PATH": str(tmp / f"{name}-emulator.sqlite3"),
            "PAYOPS_Q_NAME": f"bench-{name}",
            **extra,
        }
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--child"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def release(self, count: int) -> list[dict[str, Any]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{count}\n")
        self.process.stdin.flush()
        samples = []
        for line in self.process.stdout:
            if line.startswith("SAMPLE "):
                samples.append(json.loads(line[7:]))
            elif line.startswith("DONE"):
                return samples
        raise SystemExit(f"the {self.name} run stopped (exit {self.process.wait()})")

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()


def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        template = tmp / "template"
        template.mkdir()
        migrate(
            {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
            | {
                "DJANGO_SETTINGS_MODULE": "config.settings.local",
                "PAYOPS_SQLITE_PATH": str(template / "payops.sqlite3"),
                "EMULATOR_SQLITE_PATH": str(template / "emulator.sqlite3"),
            }
        )
        configs: dict[str, dict[str, str]] = {
            "baseline": {"PAYOPS_Q_WAKE_UP": "false", "PAYOPS_Q_POLL": "1"},
            "embedded": {},
        }
        if redis_answers(REDIS_URL):
            configs["redis"] = {"REDIS_URL": REDIS_URL}
        else:
            print(f"# no Redis at {REDIS_URL}: the redis figures are skipped")
        children = [Child(config, template, tmp, extra) for config, extra in configs.items()]
        try:
            for child in children:
                child.release(0)  # its world is ready (and warm)
            per_round = max(1, RELEASES // ROUNDS)
            samples: dict[str, list[list[dict[str, Any]]]] = {c: [] for c in configs}
            for _ in range(ROUNDS):
                for child in children:
                    samples[child.name].append(child.release(per_round))
        finally:
            for child in children:
                child.stop()
        report(samples)


def report(samples: dict[str, list[list[dict[str, Any]]]]) -> None:
    figures: dict[str, tuple[float, float]] = {}
    for config, rounds in samples.items():
        flat = [s["release_to_call_ms"] for one in rounds for s in one]
        figures[config] = (percentile(flat, 0.50), percentile(flat, 0.95))
        medians = ", ".join(
            f"{statistics.median(s['release_to_call_ms'] for s in one):.0f}" for one in rounds
        )
        stages = ", ".join(
            f"{stage} {statistics.median(s[stage] for one in rounds for s in one):.0f}"
            for stage in STAGES
        )
        print(
            f"# {config}: {len(flat)} releases, p50 {figures[config][0]:.0f} ms, "
            f"p95 {figures[config][1]:.0f} ms, max {max(flat):.0f} ms; "
            f"round medians {medians}; median stages: {stages}"
        )
    p50, p95 = figures["embedded"]
    b50, b95 = figures["baseline"]
    print(f"release_to_call_baseline_p50_ms={b50:.0f}")
    print(f"release_to_call_baseline_p95_ms={b95:.0f}")
    print(f"release_to_call_p50_ratio={p50 / b50:.2f}")
    print(f"release_to_call_p95_ratio={p95 / b95:.2f}")
    if "redis" in figures:
        print(f"release_to_call_redis_p50_ms={figures['redis'][0]:.0f}")
        print(f"release_to_call_redis_p95_ms={figures['redis'][1]:.0f}")
    print(f"release_to_call_samples={sum(len(one) for one in samples['embedded'])}")
    print(f"release_to_call_p50_ms={p50:.0f}")
    print(f"release_to_call_p95_ms={p95:.0f}")


# --- child --------------------------------------------------------------------------------------


def child() -> None:
    """Build the world, then release the number of payouts each stdin line asks for."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    arrivals = Path(os.environ["PAYOPS_SQLITE_PATH"]).with_suffix(".arrivals")
    arrivals.touch()
    env = dict(os.environ, BENCH_ARRIVALS_FILE=str(arrivals), EMULATOR_URL=url)
    emulator = subprocess.Popen(
        [
            *[sys.executable, "-m", "uvicorn", "_arrivals:application", "--app-dir", "bench"],
            *["--port", str(port), "--lifespan", "on", "--log-level", "warning"],
        ],
        cwd=ROOT,
        env=env,
    )
    worker: subprocess.Popen[bytes] | None = None
    try:
        wait_healthy(url, emulator)
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        world = World(url, os.environ["EMULATOR_CONTROL_TOKEN"])
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        world.wait_for_worker()
        for _ in range(WARMUP):
            world.release_one(arrivals)
        for line in sys.stdin:
            for _ in range(int(line)):
                print("SAMPLE " + json.dumps(world.release_one(arrivals)), flush=True)
            print("DONE", flush=True)
    finally:
        for process in (worker, emulator):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()


class World:
    """An environment with a funded account, a recipient, a maker and an approver."""

    def __init__(self, url: str, token: str) -> None:
        from django.conf import settings
        from django.contrib.auth.models import Group

        from gateway.models import Environment
        from staff.models import StaffUser
        from staff.roles import FINANCE_APPROVER, FINANCE_MAKER, roles_sync

        settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
        self.control = httpx.Client(
            base_url=f"{url}/_control", headers={"X-Emulator-Token": token}, timeout=30
        )
        roles_sync()
        tag = secrets.token_hex(3)

        def person(role: str) -> Any:
            user = StaffUser.objects.create_user(f"{role}-{tag}@bench.test", secrets.token_hex(8))
            user.groups.add(Group.objects.get(name=role))
            return StaffUser.objects.get(pk=user.pk)

        self.maker, self.approver = person(FINANCE_MAKER.key), person(FINANCE_APPROVER.key)
        credentials = self._control(
            "POST", "clients", json={"name": "bench", "rate_per_second": 100, "max_concurrent": 10}
        )
        self.env = Environment(
            name=f"bench-release-{tag}",
            kind="sandbox",
            base_url=url,
            rate_per_second=100,
            max_concurrent=10,
            weekly_budget=1_000_000,
            verification_email=f"otp-{tag}@bench.test",
        )
        self.env.set_credentials(**credentials)
        self.env.save()
        self._accounts(tag)

    def _control(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.control.request(method, path, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else {}

    def _accounts(self, tag: str) -> None:
        from accounts.models import Recipient, VirtualAccount
        from gateway.client import call_sync, upstream
        from users.models import EndUser

        client = upstream(self.env)
        email = f"payee-{tag}@example.com"
        user = call_sync(
            client.users.create,
            idempotency_key=str(uuid.uuid4()),
            email=email,
            phone_number="+15125550100",
            first_name="Ada",
            last_name="Lovelace",
            country="US",
        )
        account = call_sync(client.virtual_accounts.create, user_id=user.user_id, mode="fiat")
        self._control("POST", "clock", json={"advance_seconds": 10})
        self._control("POST", "tick")
        self._control(
            "POST", "deposits", json={"virtual_account_id": account.id, "amount": "900000.00"}
        )
        recipient = call_sync(
            client.recipients.create,
            user_id=user.user_id,
            first_name="Grace",
            last_name="Hopper",
            email="grace@example.com",
            address={"street_name": "1 Main St", "city": "Austin", "country": "US"},
            account={
                "account_type": "WIRE",
                "account_number": "123456789012",
                "routing_number": "021000021",
                "bank_name": "Chase",
            },
        )
        end_user = EndUser.objects.create(
            environment=self.env,
            upstream_id=user.user_id,
            email=email,
            first_name="Ada",
            last_name="Lovelace",
            country="US",
            status="verified",
            verification_status="verified",
        )
        self.account = VirtualAccount.objects.create(
            environment=self.env,
            end_user=end_user,
            upstream_id=account.id,
            mode="fiat",
            status="active",
        )
        self.recipient = Recipient.objects.create(
            status="approved",  # dual control: a payable recipient
            environment=self.env,
            end_user=end_user,
            upstream_id=recipient.recipient_id,
            kind="individual",
            first_name="Grace",
            last_name="Hopper",
            street_name="1 Main St",
            city="Austin",
            country="US",
            account_type="WIRE",
            account_number="123456789012",
            routing_number="021000021",
            created_by=self.maker,
        )

    def wait_for_worker(self) -> None:
        """The cluster is up when a trivial task comes back (bounded)."""
        from django_q.tasks import async_task, result

        task_id = async_task("math.floor", 1.5)
        if result(task_id, wait=60_000) != 1:
            raise SystemExit("the qcluster worker did not run a task within 60 s")

    def release_one(self, arrivals: Path) -> dict[str, Any]:
        """One payout from approval to the upstream; the sample and where its time went."""
        from django.db import transaction

        from gateway.models import UpstreamCall
        from payouts.approval.services import payout_approve
        from payouts.models import ChangeSource, Payout, PayoutStatus
        from payouts.release.code import payout_otp_confirm, payout_otp_send
        from payouts.states import payout_transition
        from tests.identity import stepped_up  # the approver as right after a second factor

        payout = Payout.objects.create(
            environment=self.env,
            maker=self.maker,
            virtual_account=self.account,
            recipient=self.recipient,
            amount=Decimal("10.05"),
            reference=f"BENCH-{secrets.token_hex(4)}",
        )
        payout_transition(
            payout, PayoutStatus.PENDING_APPROVAL, source=ChangeSource.STAFF, by=self.maker
        )
        payout_approve(payout=payout.pk, by=stepped_up(self.approver))
        payout_otp_send(payout=payout.pk, by=self.approver)
        messages = self._control("GET", "mailbox", params={"email": self.env.verification_email})
        code = str(messages["messages"][0]["code"])
        committed: list[float] = []
        with transaction.atomic():
            # Registered first, so it runs first once the release's transaction has committed.
            transaction.on_commit(lambda: committed.append(time.time()))
            payout_otp_confirm(payout=payout.pk, by=stepped_up(self.approver), code=code)
        key = str(payout.idempotency_key)
        arrived = wait_arrival(arrivals, key)
        # Let the payout finish (its code is consumed) before the next one supersedes codes.
        deadline = time.monotonic() + ARRIVAL_TIMEOUT
        while time.monotonic() < deadline:
            payout.refresh_from_db()
            if payout.status != PayoutStatus.SUBMITTING:
                break
            time.sleep(0.05)
        call = UpstreamCall.objects.filter(
            operation="payout_initiate", idempotency_key=key
        ).earliest("created_at")
        assert payout.last_submit_at is not None
        task_at = payout.last_submit_at.timestamp()
        return {
            "release_to_call_ms": round((arrived - committed[0]) * 1000, 1),
            "to_task_ms": round((task_at - committed[0]) * 1000, 1),
            "task_to_call_ms": round((call.created_at.timestamp() - task_at) * 1000, 1),
            "call_to_arrival_ms": round((arrived - call.created_at.timestamp()) * 1000, 1),
            "status": str(payout.status),
        }


def wait_arrival(arrivals: Path, key: str) -> float:
    deadline = time.monotonic() + ARRIVAL_TIMEOUT
    while time.monotonic() < deadline:
        for line in arrivals.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["key"] == key:
                return float(record["at"])
        time.sleep(0.005)
    raise SystemExit(f"no initiation arrived for {key} within {ARRIVAL_TIMEOUT:g}s")


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        main()
