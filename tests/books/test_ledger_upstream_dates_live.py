"""The ledger is dated when the upstream made each entry, so balance history agrees with the
upstream's readings (issue 30, item 11), on the emulator over HTTP: a completed payout returned
upstream and learned a day later by reconciliation, and a reading taken while a payout was in
flight (its answer recorded an hour after the upstream debited the account)."""

from __future__ import annotations

import types
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import BalanceSnapshot
from books.ledger import balance_as_of
from books.reconciliation.engine import run_start
from books.reconciliation.exception_actions import exception_refetch
from books.reconciliation.models import ExceptionKind, ReconciliationException
from books.statements.history import balance_history
from books.statements.statement import statement_build
from payouts.models import Payout, PayoutStatus
from staff.models import StaffUser
from tests.books.test_reconciliation_live import funded, initiated
from tests.gateway import conftest as gateway_fixtures
from tests.payouts import conftest as payout_fixtures
from tests.payouts.live import World

_fresh_shared_state = gateway_fixtures._fresh_shared_state
live_emulator = gateway_fixtures.live_emulator
sandbox = gateway_fixtures.sandbox
q_sync = payout_fixtures.q_sync
staff = payout_fixtures.staff
world = payout_fixtures.world
S = PayoutStatus


@pytest.fixture(autouse=True)
def _nobody_listens(settings: Any) -> None:
    # No receiver: PayOps learns what happened upstream only by reconciling.
    settings.WEBHOOKS_PUBLIC_BASE_URL = "http://127.0.0.1:9"


@contextmanager
def payops_clock_ahead(module: Any, by: timedelta) -> Iterator[None]:
    """PayOps records in `module` happen `by` later than now (it learns late): the one clock
    this machine cannot move forward for real."""
    real = module.timezone
    module.timezone = types.SimpleNamespace(now=lambda: real.now() + by)
    try:
        yield
    finally:
        module.timezone = real


def reconcile(world: World, by: StaffUser, *, learned_after: timedelta | None = None) -> None:
    """A reconciliation run (it reads the balance), then every status difference fetched again."""
    from payouts.tracking import events

    run_start(environment=world.environment, by=by)
    for item in ReconciliationException.objects.filter(kind=ExceptionKind.STATUS_DIFFERS):
        if item.state != "resolved":
            with payops_clock_ahead(events, learned_after or timedelta(0)):
                exception_refetch(item=item, by=by)


def readings_against_the_ledger(world: World, by: StaffUser) -> list[tuple[Decimal, Decimal]]:
    """Every reading of the balance history around today: (upstream balance, ledger then)."""
    today = timezone.now().date()
    days = balance_history(
        virtual_account=world.account,
        start=today - timedelta(days=1),
        end=today + timedelta(days=1),
        by=by,
    )
    return [(r.balance, r.ledger) for day in days for r in day.readings]


def test_a_return_learned_a_day_later_leaves_no_gap_in_balance_history(
    world: World, staff: dict[str, StaffUser]
) -> None:
    funded(world)
    payout = initiated(world, staff, "70.00")
    world.tick(times=5)  # completes upstream; nobody tells PayOps
    reconcile(world, staff["maker"])
    assert Payout.objects.get(pk=payout.pk).status == S.COMPLETED

    returned = {"status": "FAILED"}  # upstream, silently: a return
    world.emulator.control("POST", f"payouts/{payout.upstream_id}/status", json=returned)
    # The next day's reconciliation reads the balance and learns of the return.
    reconcile(world, staff["maker"], learned_after=timedelta(days=1))
    payout = Payout.objects.get(pk=payout.pk)
    assert payout.status == S.RETURNED
    reconcile(world, staff["maker"])  # a later reading, the balance unchanged since the return

    readings = readings_against_the_ledger(world, staff["maker"])
    assert len(readings) >= 3
    assert all(upstream == ledger for upstream, ledger in readings), readings
    last = BalanceSnapshot.objects.filter(virtual_account=world.account).order_by("-pk")[0]
    assert balance_as_of(world.account, last.as_of) == last.balance
    built = statement_build(
        virtual_account=world.account,
        start=timezone.now().date(),
        end=timezone.now().date(),
        by=staff["maker"],
        refresh=True,
    )
    assert built.check.agrees


def test_a_reading_taken_while_a_payout_was_in_flight_agrees_once_it_settles(
    world: World, staff: dict[str, StaffUser]
) -> None:
    from payouts.release import initiation

    funded(world)
    # The upstream debits at once; PayOps records the answer an hour later (a lost answer and a
    # resend): in between, the balance is read.
    with payops_clock_ahead(initiation, timedelta(hours=1)):
        payout = initiated(world, staff, "80.00")
    reconcile(world, staff["maker"])  # the reading, taken while the payout is in flight
    world.tick(times=5)  # it completes upstream
    reconcile(world, staff["maker"])  # PayOps learns it (GET), and reads the balance again
    assert Payout.objects.get(pk=payout.pk).status == S.COMPLETED

    readings = readings_against_the_ledger(world, staff["maker"])
    assert len(readings) >= 2
    assert all(upstream == ledger for upstream, ledger in readings), readings
