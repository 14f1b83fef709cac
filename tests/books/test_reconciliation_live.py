"""The issue's scenario on the emulator over HTTP: what happened upstream without PayOps knowing
is found by the next run, each mismatch named and queued; fixing them resolves them; a run
interrupted by the upstream resumes where it stopped without counting twice."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Deposit
from books.models import BalanceAdjustment
from books.reconciliation.engine import run_continue, run_start
from books.reconciliation.exception_actions import (
    exception_adopt,
    exception_explain,
    exception_refetch,
)
from books.reconciliation.models import (
    ExceptionKind,
    ExceptionState,
    ReconciliationException,
    ReconciliationRun,
    RunState,
)
from payouts.approval.services import payout_approve
from payouts.models import Payout, PayoutStatus
from payouts.release.code import payout_otp_confirm, payout_otp_send
from staff.models import AuditEntry, StaffUser
from tests.gateway import conftest as gateway_fixtures
from tests.payouts import conftest as payout_fixtures
from tests.payouts.live import World, submitted_payout

# The live payout world's fixtures (tests/payouts/conftest.py), used here as they are.
_fresh_shared_state = gateway_fixtures._fresh_shared_state
live_emulator = gateway_fixtures.live_emulator
sandbox = gateway_fixtures.sandbox
q_sync = payout_fixtures.q_sync
staff = payout_fixtures.staff
world = payout_fixtures.world

K = ExceptionKind
S = PayoutStatus


@pytest.fixture(autouse=True)
def _nobody_listens(settings: Any) -> None:
    # No receiver is registered: every event the upstream sends about these payouts is lost.
    settings.WEBHOOKS_PUBLIC_BASE_URL = "http://127.0.0.1:9"


def initiated(world: World, staff: dict[str, StaffUser], amount: str) -> Payout:
    payout = submitted_payout(world, maker=staff["maker"], amount=amount)
    payout_approve(payout=payout, by=staff["approver"])
    payout_otp_send(payout=payout, by=staff["approver"])
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
    assert payout.status == S.CREATED
    return payout


def funded(world: World) -> None:
    """PayOps's record of the deposit build_world made upstream (its event was not heard)."""
    Deposit.objects.create(
        virtual_account=world.account,
        deposit_id="dep-world",
        amount=Decimal("900000.00"),
        currency="USD",
        received_at=timezone.now() - timezone.timedelta(minutes=5),
    )


def upstream_balance(world: World) -> Decimal:
    from gateway.client import call_sync, upstream

    client = upstream(world.environment)
    return call_sync(
        client.virtual_accounts.balance, str(world.account.upstream_id)
    ).available_balance


def items(kind: str | None = None) -> list[ReconciliationException]:
    rows = ReconciliationException.objects.order_by("pk")
    return list(rows.filter(kind=kind) if kind else rows)


def test_the_scenario_is_found_named_queued_and_resolved_once_fixed(
    world: World, staff: dict[str, StaffUser]
) -> None:
    funded(world)
    emulator = world.emulator
    completes = initiated(world, staff, "100.00")  # completes upstream; its events are dropped
    fails = initiated(world, staff, "200.00")  # fails upstream silently (no event at all)
    # A payout made upstream outside PayOps, to the same recipient from the same account.
    outside = emulator.control(
        "POST",
        "payouts",
        json={
            "virtual_account_id": str(world.account.upstream_id),
            "recipient_id": str(world.recipient.upstream_id),
            "amount": "300.00",
        },
    )
    emulator.control("POST", f"payouts/{fails.upstream_id}/status", json={"status": "FAILED"})
    emulator.control("POST", "faults", json={"drop_events_next": 50})
    world.tick(times=5)  # the first completes upstream; its events are dropped
    emulator.control(
        "POST",
        f"virtual-accounts/{world.account.upstream_id}/balance-adjustments",
        json={"amount": "-12.34"},
    )
    assert Payout.objects.get(pk=completes.pk).status == S.CREATED  # nobody told PayOps
    assert Payout.objects.get(pk=fails.pk).status == S.CREATED

    first = run_start(environment=world.environment, by=staff["maker"])  # q_sync: runs inline
    first.refresh_from_db()
    assert first.state == RunState.COMPLETED
    assert first.payouts_checked == 3 and first.accounts_checked == 1
    # One list page and one balance: the calls it spent are the calls it made.
    assert first.calls_spent == 2

    found = {(i.kind, i.key) for i in items()}
    assert found == {
        (K.STATUS_DIFFERS, completes.upstream_id),
        (K.STATUS_DIFFERS, fails.upstream_id),
        (K.MISSING_IN_PAYOPS, outside["payout_id"]),
        (K.BALANCE_DIFFERS, f"va:{world.account.pk}"),
    }
    assert all(i.state == ExceptionState.OPEN and i.first_seen_run_id == first.pk for i in items())
    status_item = items(K.STATUS_DIFFERS)[0]
    assert "upstream" in status_item.summary and status_item.theirs["status"] in {
        "COMPLETED",
        "FAILED",
    }
    missing = items(K.MISSING_IN_PAYOPS)[0]
    assert missing.virtual_account_id == world.account.pk  # found through its recipient
    assert missing.theirs["amount"] == "300.00"
    balance = items(K.BALANCE_DIFFERS)[0]
    ledger_closing = Decimal(balance.ours["closing"])
    assert Decimal(balance.theirs["available_balance"]) == upstream_balance(world)
    assert balance.difference == upstream_balance(world) - ledger_closing
    assert AuditEntry.objects.filter(action="books.exception_opened").count() == 4

    # A second run before anything is fixed finds the same four: no new items.
    second = run_start(environment=world.environment, by=staff["approver"])
    second.refresh_from_db()
    assert second.findings == 0 and len(items()) == 4
    assert {i.last_seen_run_id for i in items()} == {second.pk}

    # Fix: fetch both payouts again (tracking moves them), adopt the outside one.
    for item in items(K.STATUS_DIFFERS):
        exception_refetch(item=item, by=staff["maker"])
    assert Payout.objects.get(pk=completes.pk).status == S.COMPLETED
    assert Payout.objects.get(pk=fails.pk).status == S.FAILED
    exception_adopt(item=missing, by=staff["approver"])
    adopted = Payout.objects.get(upstream_id=outside["payout_id"])
    assert adopted.maker == staff["approver"] and adopted.recipient == world.recipient
    assert adopted.virtual_account == world.account
    assert AuditEntry.objects.filter(action="payouts.adopted", actor=staff["approver"]).exists()

    third = run_start(environment=world.environment, by=staff["maker"])
    third.refresh_from_db()
    for item in items(K.STATUS_DIFFERS):
        assert item.state == ExceptionState.RESOLVED and item.auto_resolved
        assert item.resolution_reason == f"agreed in run {third.pk}"
    missing.refresh_from_db()
    assert missing.state == ExceptionState.RESOLVED and not missing.auto_resolved
    # What is left is the adjustment nobody explained: the balance is off by exactly it.
    balance.refresh_from_db()
    assert balance.state == ExceptionState.OPEN
    assert balance.difference == Decimal("-12.34")
    assert third.findings == 0

    exception_explain(item=balance, reason="Bank charge on the account", by=staff["maker"])
    adjustment = BalanceAdjustment.objects.get()
    assert adjustment.amount == Decimal("-12.34") and adjustment.virtual_account == world.account

    fourth = run_start(environment=world.environment, by=staff["maker"])
    fourth.refresh_from_db()
    assert fourth.findings == 0
    assert all(i.state == ExceptionState.RESOLVED for i in items())


def test_a_run_interrupted_by_the_upstream_resumes_where_it_stopped_without_counting_twice(
    world: World, staff: dict[str, StaffUser], settings: Any
) -> None:
    settings.GATEWAY_MAX_ATTEMPTS = 1
    funded(world)
    for amount in ("10.00", "20.00", "30.00"):
        world.emulator.control(
            "POST",
            "payouts",
            json={
                "virtual_account_id": str(world.account.upstream_id),
                "recipient_id": str(world.recipient.upstream_id),
                "amount": amount,
            },
        )
    # The background share is spent: the limiter refuses before anything is sent.
    share = world.environment.background_share
    world.environment.background_share = 0
    world.environment.save(update_fields=["background_share"])
    run = run_start(environment=world.environment, by=staff["maker"])
    run.refresh_from_db()
    assert run.state == RunState.PAUSED and "background share" in run.paused_reason
    assert run.interruptions == 1 and run.calls_spent == 0 and run.next_page == 1
    world.environment.background_share = share
    world.environment.save(update_fields=["background_share"])

    # Then the upstream fails: the call was sent, so it is spent.
    world.emulator.faults(error_rate=1.0)
    run = run_continue(run.pk)
    assert run.state == RunState.PAUSED
    assert run.interruptions == 2 and run.calls_spent == 1
    assert run.next_page == 1 and run.payouts_checked == 0
    assert "ServerError" in run.paused_reason or "500" in run.paused_reason
    assert run.resume_after is not None
    assert ReconciliationException.objects.count() == 0

    world.emulator.control("DELETE", "faults")
    run = run_continue(run.pk)
    assert run.state == RunState.COMPLETED
    assert run.payouts_checked == 3 and run.accounts_checked == 1
    assert run.calls_spent == 3  # the refused call, the list page, the balance
    assert ReconciliationException.objects.filter(kind=K.MISSING_IN_PAYOPS).count() == 3
    assert ReconciliationException.objects.filter(kind=K.BALANCE_DIFFERS).count() == 1
    assert ReconciliationRun.objects.count() == 1
