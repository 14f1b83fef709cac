"""Exactly-once initiation against the emulator over HTTP: faults never make money move twice."""

from __future__ import annotations

from decimal import Decimal

import pytest

from payouts.approval.services import payout_approve
from payouts.errors import PayoutActionRefused
from payouts.models import Payout, PayoutStatus
from payouts.release.code import payout_otp_confirm, payout_otp_send
from payouts.release.initiation import payouts_recover_submitting
from staff.models import StaffUser
from tests.payouts.live import World, submitted_payout

S = PayoutStatus
INITIATE = "/payout"


def approved(world: World, staff: dict[str, StaffUser], amount: str = "100.00") -> Payout:
    payout = submitted_payout(world, maker=staff["maker"], amount=amount)
    payout_approve(payout=payout, by=staff["approver"])
    payout.refresh_from_db()
    assert payout.status == S.APPROVED
    return payout


def release(world: World, payout: Payout, by: StaffUser) -> Payout:
    sent = payout_otp_send(payout=payout, by=by)
    assert sent.sent_to == world.environment.verification_email
    return payout_otp_confirm(payout=payout, by=by, code=world.otp_code())


def initiations(world: World) -> int:
    return world.emulator.witness.count(INITIATE, "POST")


def test_approved_fiat_payout_is_initiated_once_with_its_key_and_tracked(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = release(world, approved(world, staff), staff["approver"])
    payout.refresh_from_db()
    assert payout.status == S.CREATED and payout.upstream_id
    assert payout.otp_code_encrypted == ""
    assert [p["payout_id"] for p in world.payouts_upstream()] == [payout.upstream_id]
    assert initiations(world) == 1


def test_double_submit_gives_one_upstream_payout(world: World, staff: dict[str, StaffUser]) -> None:
    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    code = world.otp_code()
    first = payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    with pytest.raises(PayoutActionRefused) as refused:
        payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    assert refused.value.code == "already_sent" and first.upstream_id
    assert len(world.payouts_upstream()) == 1
    assert initiations(world) == 1


def test_dropped_response_then_retry_gives_one_payout_via_replay(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    world.emulator.faults(drop_response_next=1)
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
    assert payout.status == S.CREATED
    # Two requests reached the upstream (the first acted, its answer was lost), one payout.
    assert initiations(world) == 2
    assert len(world.payouts_upstream()) == 1
    assert world.payouts_upstream()[0]["payout_id"] == payout.upstream_id


@pytest.mark.parametrize("fault", [{"error_rate": 0.5}, {"rate_429": 0.5}])
def test_500s_and_429s_during_initiation_give_one_payout(
    world: World, staff: dict[str, StaffUser], fault: dict[str, float], settings
) -> None:  # type: ignore[no-untyped-def]
    settings.GATEWAY_MAX_ATTEMPTS = 12
    fault_status = 500 if "error_rate" in fault else 429
    payouts = []
    # At least three payouts, and on until the fault has really hit an initiation (random).
    for i in range(12):
        payout = approved(world, staff, amount=f"{100 + i}.00")
        payouts.append(payout)
        payout_otp_send(payout=payout, by=staff["approver"])
        world.emulator.faults(**fault)
        payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
        world.emulator.faults(error_rate=0, rate_429=0)
        if len(payouts) >= 3 and fault_status in world.emulator.witness.statuses():
            break
    for _ in range(5):  # the recovery schedule, for any payout the retries did not finish
        payouts_recover_submitting_now()
    recorded = {p.upstream_id for p in Payout.objects.filter(pk__in=[p.pk for p in payouts])}
    upstream_ids = [p["payout_id"] for p in world.payouts_upstream()]
    assert len(upstream_ids) == len(payouts) == len(set(upstream_ids))
    assert recorded == set(upstream_ids)
    assert fault_status in world.emulator.witness.statuses()  # the faults really happened


def payouts_recover_submitting_now() -> int:
    from django.conf import settings

    old = settings.PAYOUTS_SUBMITTING_STALE_SECONDS
    settings.PAYOUTS_SUBMITTING_STALE_SECONDS = -1
    try:
        return payouts_recover_submitting()
    finally:
        settings.PAYOUTS_SUBMITTING_STALE_SECONDS = old


def test_amount_and_fees_debited_once(world: World, staff: dict[str, StaffUser]) -> None:
    from gateway.client import call_sync, upstream

    client = upstream(world.environment)
    before = call_sync(client.virtual_accounts.balance, world.account.upstream_id)
    payout = approved(world, staff, amount="250.00")
    payout_otp_send(payout=payout, by=staff["approver"])
    world.emulator.faults(drop_response_next=1)
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
    after = call_sync(client.virtual_accounts.balance, world.account.upstream_id)
    debited = before.available_balance - after.available_balance
    (made,) = world.payouts_upstream()
    assert made["payout_id"] == payout.upstream_id
    assert debited == Decimal("250.00") + Decimal(made["fee"])  # amount plus fees, once


def test_crash_between_the_call_and_the_commit_is_recovered_with_the_same_key(
    world: World, staff: dict[str, StaffUser]
) -> None:
    import subprocess
    import sys

    from django.conf import settings as django_settings

    from gateway.models import UpstreamCall
    from tests.gateway.conftest import child_environment

    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    code = world.otp_code()
    # Make it `submitting` with the key committed, but let the task run in a process we kill.
    from payouts.release import initiation

    original = initiation._queue_submit
    initiation._queue_submit = lambda payout_id: None  # type: ignore[assignment]
    try:
        payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    finally:
        initiation._queue_submit = original  # type: ignore[assignment]
    payout.refresh_from_db()
    assert payout.status == S.SUBMITTING and not payout.upstream_id

    child = subprocess.run(
        [sys.executable, "-m", "tests.payouts.child_submit", str(payout.pk)],
        env=child_environment(),
        cwd=str(django_settings.BASE_DIR),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 137, child.stderr[-2000:]
    payout.refresh_from_db()
    assert payout.status == S.SUBMITTING and not payout.upstream_id  # the answer was lost
    assert len(world.payouts_upstream()) == 1  # ... but the upstream made the payout

    # The recovery schedule re-sends with the same key: the upstream replays, nothing new.
    assert payouts_recover_submitting_now() == 1
    payout.refresh_from_db()
    (made,) = world.payouts_upstream()
    assert payout.status == S.CREATED and payout.upstream_id == made["payout_id"]
    keys = set(
        UpstreamCall.objects.filter(operation="payout_initiate").values_list(
            "idempotency_key", flat=True
        )
    )
    assert keys == {str(payout.idempotency_key)}
    assert initiations(world) == 2


def test_expired_reserved_quote_is_requoted_by_the_maker_within_tolerance_and_sent(
    world: World, staff: dict[str, StaffUser]
) -> None:
    from gateway.client import call_sync, upstream
    from payouts.approval.services import payout_requote

    reserved = call_sync(
        upstream(world.environment).payouts.preview,
        virtual_account_id=world.account.upstream_id,
        amount=Decimal("300.00"),
        recipient_id=world.recipient.upstream_id,
        create_quote=True,
    )
    payout = submitted_payout(
        world,
        maker=staff["maker"],
        amount="300.00",
        preview_quote_id=reserved.quote_id,
        preview_recipient_amount=reserved.recipient_amount,
        preview_quote_expires_at=reserved.quote_expires_at,
    )
    payout_approve(payout=payout, by=staff["approver"])
    world.emulator.advance(16 * 60)  # the reservation lived 15 minutes
    payout_otp_send(payout=payout, by=staff["approver"])
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
    assert payout.status == S.APPROVED and world.payouts_upstream() == []
    assert payout.initiation_error  # the upstream refused the expired quote
    key = payout.idempotency_key
    payout = payout_requote(payout=payout, by=staff["maker"])
    assert payout.status == S.APPROVED  # same price: the approval is kept
    assert payout.preview_quote_id != reserved.quote_id and payout.idempotency_key != key
    payout_otp_send(payout=payout, by=staff["approver"])
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
    assert payout.status == S.CREATED
    (made,) = world.payouts_upstream()
    assert made["quote_id"] == payout.preview_quote_id


def test_upstream_down_then_code_superseded_waits_for_a_person_and_never_pays_twice(
    world: World, staff: dict[str, StaffUser]
) -> None:
    first = approved(world, staff, amount="101.00")
    payout_otp_send(payout=first, by=staff["approver"])
    world.emulator.faults(error_rate=1.0)  # every attempt refused before it is handled
    first = payout_otp_confirm(payout=first, by=staff["approver"], code=world.otp_code())
    world.emulator.faults(error_rate=0)
    assert first.status == S.SUBMITTING and "same key" in first.initiation_error
    # Another payout asks for a code: the upstream keeps one code per client, the first one's
    # code no longer counts.
    second = release(world, approved(world, staff, amount="102.00"), staff["approver"])
    assert second.status == S.CREATED
    payouts_recover_submitting_now()
    first.refresh_from_db()
    assert first.status == S.APPROVED and first.initiation_error  # says what to do
    assert len(world.payouts_upstream()) == 1
    first = release(world, first, staff["approver"])
    assert first.status == S.CREATED
    assert {p["payout_id"] for p in world.payouts_upstream()} == {
        first.upstream_id,
        second.upstream_id,
    }


def test_a_release_is_counted_once_in_the_metrics_by_outcome(
    world: World, staff: dict[str, StaffUser]
) -> None:
    from prometheus_client import REGISTRY

    def releases(outcome: str) -> float:
        value = REGISTRY.get_sample_value("payops_payout_releases_total", {"outcome": outcome})
        return value or 0.0

    before = {o: releases(o) for o in ("accepted", "correctable", "refused", "undecided")}
    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    code = world.otp_code()
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=wrong)
    assert payout.status == S.APPROVED  # the upstream refused the code: correctable
    payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    with pytest.raises(PayoutActionRefused):
        payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    # Undecided: every attempt answers 500, so nobody knows whether it was made; it waits in
    # submitting for the recovery schedule, which sends it again once the upstream is back.
    unknown = approved(world, staff, amount="101.00")
    payout_otp_send(payout=unknown, by=staff["approver"])
    world.emulator.faults(error_rate=1.0)
    unknown = payout_otp_confirm(payout=unknown, by=staff["approver"], code=world.otp_code())
    world.emulator.faults(error_rate=0)
    assert unknown.status == S.SUBMITTING
    # Refused for good: the virtual account it pays from is frozen upstream.
    frozen = approved(world, staff, amount="102.00")
    payout_otp_send(payout=frozen, by=staff["approver"])
    world.emulator.control(
        "POST", f"virtual-accounts/{world.account.upstream_id}/status", json={"status": "frozen"}
    )
    frozen = payout_otp_confirm(payout=frozen, by=staff["approver"], code=world.otp_code())
    assert frozen.status == S.FAILED and frozen.initiation_error
    grew = {o: releases(o) - n for o, n in before.items()}
    assert grew == {"accepted": 1, "correctable": 1, "refused": 1, "undecided": 1}
