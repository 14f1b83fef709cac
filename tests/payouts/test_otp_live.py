"""The fiat OTP against the emulator: wrong codes count down, expiry offers a resend, 5 block."""

from __future__ import annotations

import pytest

from payouts.approvals import payout_approve
from payouts.errors import PayoutActionRefused
from payouts.models import Payout, PayoutStatus
from payouts.otp import payout_otp_confirm, payout_otp_send
from staff.models import StaffUser
from tests.payouts.live import World, submitted_payout

S = PayoutStatus


def approved(world: World, staff: dict[str, StaffUser]) -> Payout:
    payout = submitted_payout(world, maker=staff["maker"])
    payout_approve(payout=payout, by=staff["approver"])
    return Payout.objects.get(pk=payout.pk)


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


def test_wrong_code_says_how_many_tries_remain_and_the_right_one_sends(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    code = world.otp_code()
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=wrong(code))
    assert payout.status == S.APPROVED
    assert payout.initiation_error == "Wrong code: 4 tries remain."
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    assert payout.status == S.CREATED and payout.upstream_id
    assert len(world.payouts_upstream()) == 1


def test_five_wrong_codes_block_until_a_new_code_is_sent(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    code = world.otp_code()
    for _ in range(5):
        payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=wrong(code))
    assert "blocked" in payout.initiation_error
    calls = world.emulator.witness.count("/payout", "POST")
    with pytest.raises(PayoutActionRefused) as blocked:
        payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    assert blocked.value.code == "otp_blocked" and blocked.value.field == "code"
    assert world.emulator.witness.count("/payout", "POST") == calls  # refused before any call
    payout_otp_send(payout=payout, by=staff["approver"])
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
    assert payout.status == S.CREATED and len(world.payouts_upstream()) == 1


def test_expired_code_offers_a_resend(world: World, staff: dict[str, StaffUser]) -> None:
    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    code = world.otp_code()
    world.emulator.advance(11 * 60)  # the upstream's clock: the code lived 10 minutes
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    assert payout.status == S.APPROVED
    assert payout.initiation_error == "The code expired: send a new one."
    assert world.payouts_upstream() == []
    payout_otp_send(payout=payout, by=staff["approver"])
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
    assert payout.status == S.CREATED


def test_code_is_six_digits_and_only_an_approver_not_the_maker_releases(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = approved(world, staff)
    with pytest.raises(PayoutActionRefused) as short:
        payout_otp_confirm(payout=payout, by=staff["approver"], code="12345")
    assert short.value.field == "code" and short.value.status == 400
    with pytest.raises(PayoutActionRefused) as not_sent:
        payout_otp_confirm(payout=payout, by=staff["approver"], code="123456")
    assert not_sent.value.code == "otp_not_sent"
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        payout_otp_send(payout=payout, by=staff["maker"])
