"""Live updates: from a change committed in another process to an open page showing it.

Run: python bench/bench_live_updates.py. Uses DATABASE_URL when set, otherwise temporary SQLite
files. Two back offices run side by side, each one uvicorn process on a free port: the embedded
default (no Redis: the outbox channel layer, ADR 0012) and Redis (channels-redis at REDIS_URL,
default redis://127.0.0.1:6379/0, a run-unique prefix; skipped with a note when it does not
answer). For each, a worker stand-in (a separate Python process, as qcluster is) moves payouts
through their upstream states (payout_transition, as polling or an event does), and headless
Chromium (/usr/bin/chromium) shows the payout page, signed in as an approver. Each sample is timed
from the commit (stamped by the writer's first on_commit callback) to the page's DOM showing the
new status (a MutationObserver's Date.now(), the same machine clock). Samples alternate between
the two back offices, BENCH_LIVE_SAMPLES each (default 30) in three rounds, after warm-up ones.

Last lines: live_update_samples, live_update_p50_ms, live_update_p95_ms (the embedded default),
then live_update_redis_p50_ms, live_update_redis_p95_ms and live_update_ratio_to_redis (the
embedded p95 over Redis's, same run).
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from _support import ROOT, environment, free_port, migrate

SAMPLES = int(os.environ.get("BENCH_LIVE_SAMPLES", "30"))
WARMUP = 3
ROUNDS = 3
# A payout's upstream states, in an order the state machine allows: five moves per payout.
CHAIN = ["created", "pending", "processing", "completed", "returned"]
PAYOUTS = (SAMPLES + WARMUP) // len(CHAIN) + 2
CHROMIUM = "/usr/bin/chromium"
WAIT_SECONDS = 10  # the longest one sample is waited for

# Records the time of every change of the status badge, whatever replaced it.
OBSERVER = """() => {
  window.liveSeen = [];
  var last = null;
  new MutationObserver(function () {
    var badge = document.querySelector("[data-testid=payout-status]");
    var text = badge ? badge.textContent.trim() : null;
    if (text !== last) { last = text; window.liveSeen.push([Date.now(), text]); }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
}"""


# --- The two helper processes (run by this script with --setup / --writer) ------------------


def setup_data() -> None:
    """Print (JSON) an approver's session cookie and PAYOUTS payouts in `submitting`."""
    import django

    django.setup()
    from decimal import Decimal

    from django.conf import settings
    from django.contrib.auth.models import Group
    from django.test import Client
    from django.utils import timezone

    from accounts.models import Recipient, VirtualAccount
    from gateway.models import Environment, EnvironmentKind
    from gateway.services.environments import environment_switch
    from payouts.models import Payout
    from staff.bootstrap import seed_demo_staff
    from staff.models import StaffUser
    from staff.roles import roles_sync
    from users.models import EndUser

    environment_row = Environment(
        name=f"Bench live {secrets.token_hex(4)}",
        kind=EnvironmentKind.SANDBOX,
        base_url="http://127.0.0.1:9",
    )
    environment_row.set_credentials(client_id=secrets.token_hex(8), password="p", api_key="k")
    environment_row.verified_at = timezone.now()
    environment_row.save()
    roles_sync()
    staff = {user.groups.get().name: user for user in seed_demo_staff()}
    # Its own approver: two runs sharing one PostgreSQL database each show their own environment.
    approver = StaffUser.objects.create_user(f"approver-{secrets.token_hex(4)}@bench.test", None)
    approver.groups.add(Group.objects.get(name="finance_approver"))
    environment_switch(user=approver, environment=environment_row)
    end_user = EndUser.objects.create(
        environment=environment_row, upstream_id="user-bench", email="ana@example.test",
        first_name="Ana", last_name="Silva", country="US", status="verified",
        verification_status="verified",
    )  # fmt: skip
    account = VirtualAccount.objects.create(
        environment=environment_row, end_user=end_user, upstream_id="va-bench", status="active",
        available_balance=Decimal("900000.00"),
    )  # fmt: skip
    recipient = Recipient.objects.create(
        environment=environment_row, end_user=end_user, kind="individual", first_name="Bea",
        status="approved",
        last_name="Ruiz", street_name="1 Main St", city="Austin", country="US",
        account_type="WIRE", account_number="123456789", routing_number="021000021",
        created_by=staff["finance_maker"], upstream_id="rcp-bench",
    )  # fmt: skip
    payouts = [
        Payout.objects.create(
            environment=environment_row, maker=staff["finance_maker"], virtual_account=account,
            recipient=recipient, amount=Decimal("100.00"), status="submitting",
            reference=f"BENCH-LIVE-{n}",
        ).pk
        for n in range(PAYOUTS)
    ]  # fmt: skip
    client = Client()
    client.force_login(approver)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    print(json.dumps({"cookie": [cookie.key, cookie.value], "payouts": payouts}))


def _stamp(into: list[float]) -> None:
    into.append(time.time() * 1000)


def writer() -> None:
    """The worker stand-in: for each line "<payout id> <status>", one committed move; answers
    the commit time (epoch ms, stamped by the first on_commit callback) and the status label."""
    import django

    django.setup()
    from django.db import transaction

    from payouts.models import ChangeSource, PayoutStatus
    from payouts.states import payout_locked, payout_transition

    for line in sys.stdin:
        pk, status = line.split()
        committed: list[float] = []
        with transaction.atomic():
            transaction.on_commit(partial(_stamp, committed))
            payout_transition(payout_locked(int(pk)), status, source=ChangeSource.POLL)
        label = PayoutStatus(status).label
        sys.stdout.write(json.dumps({"committed_ms": committed[0], "label": label}) + "\n")
        sys.stdout.flush()


# --- One back office: its server, its writer, its page -------------------------------------


@dataclass
class Backoffice:
    name: str
    env: dict[str, str]
    server: subprocess.Popen[bytes] | None = None
    writer: subprocess.Popen[str] | None = None
    base: str = ""
    payouts: list[int] = field(default_factory=list)
    page: Any = None
    moves: list[tuple[int, str]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    def start(self) -> dict[str, Any]:
        migrate(self.env)
        data = json.loads(self._helper("--setup").splitlines()[-1])
        self.payouts = data["payouts"]
        self.moves = [(pk, status) for pk in self.payouts for status in CHAIN]
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.server = subprocess.Popen(
            [
                *[sys.executable, "-m", "uvicorn", "config.asgi:application", "--port", str(port)],
                *["--lifespan", "off", "--log-level", "warning", "--no-access-log"],
            ],
            cwd=ROOT,
            # DEBUG serves the static files through WhiteNoise, which warns on every one of them.
            env={**self.env, "PYTHONWARNINGS": "ignore:StreamingHttpResponse must consume"},
        )
        self.writer = subprocess.Popen(
            [sys.executable, __file__, "--writer"],
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        wait_up(self.base, self.server)
        return data

    def _helper(self, flag: str) -> str:
        return subprocess.run(
            [sys.executable, __file__, flag],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout

    def stop(self) -> None:
        for process in (self.writer, self.server):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=30)


def wait_up(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            raise SystemExit("the back office did not start")
        time.sleep(0.1)


def open_payout(office: Backoffice, pk: int) -> None:
    office.page.goto(f"{office.base}/payouts/{pk}/")
    office.page.wait_for_selector("body[data-live-connected='yes']", timeout=15_000)
    office.page.evaluate(OBSERVER)


def sample(office: Backoffice) -> float:
    """One committed move in the writer process, timed until the open page shows it."""
    pk, status = office.moves.pop(0)
    if office.page.url != f"{office.base}/payouts/{pk}/":
        open_payout(office, pk)
    assert office.writer is not None and office.writer.stdin and office.writer.stdout
    office.writer.stdin.write(f"{pk} {status}\n")
    office.writer.stdin.flush()
    answer = json.loads(office.writer.stdout.readline())
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        seen = office.page.evaluate("() => window.liveSeen")
        shown = [at for at, text in seen if text == answer["label"]]
        if shown:
            return float(shown[0] - answer["committed_ms"])
        office.page.wait_for_timeout(5)
    raise SystemExit(f"{office.name}: payout {pk} never showed {answer['label']!r} on the page")


# --- The run ---------------------------------------------------------------------------------


def redis_url() -> str:
    url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    try:
        import redis

        redis.Redis.from_url(url, socket_timeout=2).ping()
    except Exception as exc:
        print(f"# Redis not reachable at {url} ({type(exc).__name__}): its figures are skipped")
        return ""
    return url


def offices(tmp: Path) -> list[Backoffice]:
    base = environment(str(tmp))
    base["PYTHONPATH"] = f"{ROOT}{os.pathsep}{ROOT / 'bench'}"
    embedded = {**base, "REDIS_URL": ""}
    chosen = [Backoffice("outbox", embedded)]
    url = redis_url()
    if url:
        with_redis = {
            **base,
            "REDIS_URL": url,
            "PAYOPS_CHANNELS_PREFIX": f"bench{secrets.token_hex(4)}",
        }
        with_redis["PAYOPS_CACHE_PREFIX"] = with_redis["PAYOPS_CHANNELS_PREFIX"]
        if not os.environ.get("DATABASE_URL"):
            with_redis["PAYOPS_SQLITE_PATH"] = str(tmp / "redis.sqlite3")
            with_redis["EMULATOR_SQLITE_PATH"] = str(tmp / "redis-emulator.sqlite3")
        chosen.append(Backoffice("redis", with_redis))
    return chosen


def measure(chosen: list[Backoffice]) -> list[list[list[float]]]:
    """Warm-up, then ROUNDS rounds alternating sample by sample; per office, per round, ms."""
    from playwright.sync_api import sync_playwright

    rounds: list[list[list[float]]] = [[[] for _ in range(ROUNDS)] for _ in chosen]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        for office, data in ((office, office.start()) for office in chosen):
            context = browser.new_context()
            name, value = data["cookie"]
            context.add_cookies([{"name": name, "value": value, "url": office.base}])
            office.page = context.new_page()
            for _ in range(WARMUP):
                sample(office)
        for n in range(SAMPLES):
            for index, office in enumerate(chosen):
                rounds[index][n * ROUNDS // SAMPLES].append(sample(office))
        browser.close()
    return rounds


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def report(chosen: list[Backoffice], rounds: list[list[list[float]]]) -> None:
    database = "postgresql" if os.environ.get("DATABASE_URL") else "sqlite"
    print(f"# {SAMPLES} samples per back office, {database}, one uvicorn process each")
    figures: dict[str, float] = {}
    for office, per_round in zip(chosen, rounds, strict=True):
        values = [v for batch in per_round for v in batch]
        spread = ", ".join(f"{p95(batch):.0f}" for batch in per_round if batch)
        print(f"# {office.name}: p95 per round {spread} ms; max {max(values):.0f} ms")
        prefix = "live_update" if office.name == "outbox" else f"live_update_{office.name}"
        if office.name == "outbox":
            print(f"{prefix}_samples={len(values)}")
        print(f"{prefix}_p50_ms={statistics.median(values):.0f}")
        print(f"{prefix}_p95_ms={p95(values):.0f}")
        figures[office.name] = p95(values)
    if "redis" in figures:
        print(f"live_update_ratio_to_redis={figures['outbox'] / max(figures['redis'], 1):.2f}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(ROOT)
        chosen = offices(Path(tmp))
        try:
            rounds = measure(chosen)
        finally:
            for office in chosen:
                office.stop()
    report(chosen, rounds)


if __name__ == "__main__":
    if sys.argv[1:] == ["--setup"]:
        setup_data()
    elif sys.argv[1:] == ["--writer"]:
        writer()
    else:
        main()
