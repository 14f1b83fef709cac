"""Concurrency with real row locks (PostgreSQL) and the emulator over HTTP: one payout, always."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection

from payouts.approval.policy import approval_policy_publish
from payouts.approval.rules import RuleSpec
from payouts.approval.services import payout_approve
from payouts.errors import PayoutActionRefused
from payouts.models import PayoutStatus
from payouts.release.code import payout_otp_confirm, payout_otp_send
from staff.models import StaffUser
from tests.payouts.live import World, build_world, crypto_payout, submitted_payout

pytestmark = pytest.mark.postgres
S = PayoutStatus


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls in threads released together; each result or the exception it raised."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[index] = call()
        except Exception as exc:
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


@pytest.fixture
def crypto_world(
    transactional_db: None,
    request: pytest.FixtureRequest,
    staff: dict[str, StaffUser],
    q_sync: None,
) -> World:
    emulator = request.getfixturevalue("live_emulator")
    environment = request.getfixturevalue("sandbox")
    return build_world(emulator, environment, recipient_creator=staff["maker"], mode="crypto")


def test_two_approvers_at_the_same_moment_give_one_upstream_payout(
    crypto_world: World, staff: dict[str, StaffUser]
) -> None:
    # One approval needed; a crypto payout is sent as soon as it is approved (no OTP).
    for _ in range(3):
        payout = crypto_payout(crypto_world, maker=staff["maker"])
        results = at_once(
            lambda p=payout: payout_approve(payout=p.pk, by=staff["approver"]),
            lambda p=payout: payout_approve(payout=p.pk, by=staff["approver2"]),
        )
        refused = [r for r in results if isinstance(r, PayoutActionRefused)]
        assert len(refused) == 1, results  # the row lock let exactly one count
        payout.refresh_from_db()
        assert payout.approvals.count() == 1
        assert payout.status == S.CREATED and payout.deposit_instructions["wallet_address"]
    upstream_ids = [p["payout_id"] for p in crypto_world.payouts_upstream()]
    assert len(upstream_ids) == 3 == len(set(upstream_ids))


def test_two_approver_rule_holds_when_both_approve_at_once(
    world: World, staff: dict[str, StaffUser]
) -> None:
    approval_policy_publish(
        by=staff["admin"],
        default_required=1,
        rules=[RuleSpec(required_approvals=2, min_amount=Decimal("10000"), currency="USD")],
    )
    payout = submitted_payout(world, maker=staff["maker"], amount="12000.00")
    results = at_once(
        lambda: payout_approve(payout=payout.pk, by=staff["approver"]),
        lambda: payout_approve(payout=payout.pk, by=staff["approver2"]),
        lambda: payout_approve(payout=payout.pk, by=staff["approver"]),
    )
    payout.refresh_from_db()
    assert payout.status == S.APPROVED
    assert sorted(payout.approvals.values_list("approver__email", flat=True)) == [
        "approver2@pay.test",
        "approver@pay.test",
    ]
    assert sum(1 for r in results if getattr(r, "complete", False)) == 1
    assert sum(1 for r in results if isinstance(r, PayoutActionRefused)) == 1


def test_double_submit_of_the_code_at_the_same_moment_gives_one_upstream_payout(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = submitted_payout(world, maker=staff["maker"])
    payout_approve(payout=payout, by=staff["approver"])
    payout_otp_send(payout=payout, by=staff["approver"])
    code = world.otp_code()
    results = at_once(
        *[lambda: payout_otp_confirm(payout=payout.pk, by=staff["approver"], code=code)] * 3
    )
    payout.refresh_from_db()
    assert payout.status == S.CREATED
    (made,) = world.payouts_upstream()
    assert made["payout_id"] == payout.upstream_id
    assert world.emulator.witness.count("/payout", "POST") == 1, results
