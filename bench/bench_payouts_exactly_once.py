"""Exactly-once payout initiation under injected faults: no payout twice, none lost.

Run: python bench/bench_payouts_exactly_once.py. Uses DATABASE_URL / REDIS_URL when set, otherwise
a temporary SQLite file. Starts the emulator (uvicorn, its own process) on a free port with 10 %
500s and 10 % 429s on every API call, and drops the response of the initiation of a random 10 %
of the payouts (the upstream acts, the caller times out). BENCH_PAYOUTS payouts (default 200) go
through PayOps's own path: submitted, approved, OTP sent and confirmed, initiated by the task
(inline here) with the payout's key; then the recovery schedule runs until nothing is left in
`submitting`. The upstream's own list is the truth: each upstream payout carries its PayOps
reference. Last lines: double_payouts=<n> (upstream payouts beyond one per PayOps payout),
lost_payouts=<n> (PayOps payouts the upstream never made while PayOps does not show them as
refused and waiting for a person, or made but PayOps does not know them),
upstream_calls_per_payout=<x> (initiation requests per payout, retries included).
"""

from __future__ import annotations

import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from decimal import Decimal
from typing import Any

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

PAYOUTS = int(os.environ.get("BENCH_PAYOUTS", "200"))
ERROR_RATE = 0.10
RATE_429 = 0.10
DROP_SHARE = 0.10


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        env.setdefault("EMULATOR_SQLITE_PATH", os.path.join(tmp, "emulator.sqlite3"))
        os.environ.update(env)
        migrate(env)
        # The emulator is a guest with its own database alias (ADR 0002): migrate it too.
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--database", "emulator", "--noinput"],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        emulator = start_emulator(port, env)
        try:
            wait_healthy(url, emulator)
            run(url, env["EMULATOR_CONTROL_TOKEN"])
        finally:
            emulator.terminate()
            emulator.wait(timeout=60)


class Control:
    def __init__(self, url: str, token: str) -> None:
        self.client = httpx.Client(
            base_url=f"{url}/_control", headers={"X-Emulator-Token": token}, timeout=30
        )

    def __call__(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.client.request(method, path, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else {}


def retried(call: Any, *args: Any, **kwargs: Any) -> Any:
    """A person clicking again, when the gateway's own retries of an OTP send ran out."""
    from payouts.errors import PayoutActionRefused

    for _ in range(20):
        try:
            return call(*args, **kwargs)
        except PayoutActionRefused as exc:
            if exc.code != "upstream_unavailable":
                raise
    raise SystemExit("could not send an OTP in 20 tries")


def run(url: str, token: str) -> None:
    django_setup()
    from django.conf import settings
    from django.contrib.auth.models import Group
    from django_q.conf import Conf

    from accounts.models import Recipient, VirtualAccount
    from gateway.client import call_sync, upstream
    from gateway.models import Environment, UpstreamCall
    from payouts.approval.services import payout_approve
    from payouts.models import ChangeSource, Payout, PayoutStatus
    from payouts.release.code import payout_otp_confirm, payout_otp_send
    from payouts.release.initiation import payouts_recover_submitting
    from payouts.states import payout_transition
    from staff.models import StaffUser
    from staff.roles import FINANCE_APPROVER, FINANCE_MAKER, roles_sync
    from tests.identity import stepped_up  # the approver as right after a second factor
    from users.models import EndUser

    Conf.SYNC = True  # the initiation task runs inline at commit, as a worker would
    settings.GATEWAY_BACKOFF_BASE = 0.05
    settings.GATEWAY_BACKOFF_MAX = 0.5
    settings.GATEWAY_READ_TIMEOUT = 5.0
    # Notifications are not what is measured: keep their emails off the console.
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    control = Control(url, token)
    roles_sync()
    tag = secrets.token_hex(3)

    def person(role: str) -> StaffUser:
        user = StaffUser.objects.create_user(f"{role}-{tag}@bench.test", secrets.token_hex(8))
        user.groups.add(Group.objects.get(name=role))
        return StaffUser.objects.get(pk=user.pk)

    maker, approver = person(FINANCE_MAKER.key), person(FINANCE_APPROVER.key)
    credentials = control(
        "POST", "clients", json={"name": "bench", "rate_per_second": 1000, "max_concurrent": 20}
    )
    env = Environment(
        name=f"bench-payouts-{tag}",
        kind="sandbox",
        base_url=url,
        rate_per_second=1000,
        max_concurrent=20,
        weekly_budget=1_000_000,
        verification_email=f"otp-{tag}@bench.test",
    )
    env.set_credentials(**credentials)
    env.save()
    client = upstream(env)

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
    control("POST", "clock", json={"advance_seconds": 10})
    control("POST", "tick")
    control("POST", "deposits", json={"virtual_account_id": account.id, "amount": "9000000.00"})
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
        environment=env,
        upstream_id=user.user_id,
        email=email,
        first_name="Ada",
        last_name="Lovelace",
        country="US",
        status="verified",
        verification_status="verified",
    )
    mirror_account = VirtualAccount.objects.create(
        environment=env, end_user=end_user, upstream_id=account.id, mode="fiat", status="active"
    )
    mirror_recipient = Recipient.objects.create(
        status="approved",  # dual control: a payable recipient
        environment=env,
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
        created_by=maker,
    )

    rng = random.Random(14)
    control("POST", "faults", json={"error_rate": ERROR_RATE, "rate_429": RATE_429})
    started = time.monotonic()
    ours: list[int] = []
    dropped = 0
    for _ in range(PAYOUTS):
        payout = Payout.objects.create(
            environment=env,
            maker=maker,
            virtual_account=mirror_account,
            recipient=mirror_recipient,
            amount=Decimal("10.05"),
            reference=f"BENCH-{tag}-{uuid.uuid4().hex[:8]}",
        )
        payout_transition(
            payout, PayoutStatus.PENDING_APPROVAL, source=ChangeSource.STAFF, by=maker
        )
        payout_approve(payout=payout.pk, by=stepped_up(approver))
        retried(payout_otp_send, payout=payout.pk, by=approver)
        code = control("GET", "mailbox", params={"email": env.verification_email})["messages"][0][
            "code"
        ]
        if rng.random() < DROP_SHARE:
            control("POST", "faults", json={"drop_response_next": 1})
            dropped += 1
        payout_otp_confirm(payout=payout.pk, by=stepped_up(approver), code=str(code))
        control("POST", "faults", json={"drop_response_next": 0})
        ours.append(payout.pk)
    # The recovery schedule, as the worker would run it, until nothing is left in `submitting`.
    settings.PAYOUTS_SUBMITTING_STALE_SECONDS = -1
    rounds = 0
    while Payout.objects.filter(pk__in=ours, status=PayoutStatus.SUBMITTING).exists():
        rounds += 1
        payouts_recover_submitting()
        if rounds > 50:
            break
    elapsed = time.monotonic() - started
    control("DELETE", "faults")

    made: list[dict[str, Any]] = []
    page = 1
    while True:
        listing = call_sync(client.payouts.list, page=page, limit=100)
        made += [item.model_dump(mode="json") for item in listing.payouts]
        if page >= listing.total_pages:
            break
        page += 1
    by_reference = Counter(item.get("reference") for item in made)
    known = {
        p.reference: p.upstream_id
        for p in Payout.objects.filter(pk__in=ours).only("reference", "upstream_id")
    }
    upstream_ids = {item["payout_id"] for item in made}
    double = sum(count - 1 for ref, count in by_reference.items() if ref in known and count > 1)
    # A payout the upstream never made is lost unless PayOps shows it as refused and waiting for a
    # person (back in `approved` with the reason, e.g. its code was superseded by a newer one).
    waiting_refs = set(
        Payout.objects.filter(pk__in=ours, status=PayoutStatus.APPROVED)
        .exclude(initiation_error="")
        .values_list("reference", flat=True)
    )
    never_made = sum(
        1 for ref in known if by_reference.get(ref, 0) == 0 and ref not in waiting_refs
    )
    refused_waiting = sum(1 for ref in waiting_refs if by_reference.get(ref, 0) == 0)
    unknown_to_us = sum(
        1 for ref, upstream_id in known.items() if by_reference.get(ref) and upstream_id is None
    )
    wrong_id = sum(
        1 for upstream_id in known.values() if upstream_id and upstream_id not in upstream_ids
    )
    statuses = Counter(Payout.objects.filter(pk__in=ours).values_list("status", flat=True))
    initiations = UpstreamCall.objects.filter(environment=env, operation="payout_initiate")
    faults_seen = Counter(initiations.values_list("status", flat=True))
    all_calls = UpstreamCall.objects.filter(environment=env).count()
    print(f"# {PAYOUTS} payouts in {elapsed:.1f}s, {dropped} with a dropped initiation response")
    print(f"# our statuses: {dict(statuses)}; recovery rounds: {rounds}")
    for odd in Payout.objects.filter(pk__in=ours).exclude(status=PayoutStatus.CREATED):
        print(f"# payout {odd.pk} {odd.status}: {odd.initiation_error or odd.failure_reason}")
    refusals = initiations.filter(status__gte=400, status__lt=429).values_list(
        "status", "response_body"
    )
    for status, body in refusals:
        print(f"# refused {status}: {str(body)[:200]}")
    print(f"# initiation answers seen: {dict(sorted(faults_seen.items(), key=str))}")
    print(f"# never made upstream: {never_made}; made but unknown to PayOps: {unknown_to_us}")
    print(f"upstream_calls_per_payout_all={all_calls / PAYOUTS:.2f}")
    print(f"refused_waiting_for_a_person={refused_waiting}")
    print(f"double_payouts={double}")
    print(f"lost_payouts={never_made + unknown_to_us + wrong_id}")
    print(f"upstream_calls_per_payout={initiations.count() / PAYOUTS:.2f}")


if __name__ == "__main__":
    main()
