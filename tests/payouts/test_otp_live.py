"""The fiat OTP against the emulator: wrong codes count down, expiry offers a resend, 5 block,
a new code replaces the previous one (also another payout's, as the upstream keeps one)."""

from __future__ import annotations

import pytest

from payouts.approval.services import payout_approve
from payouts.errors import PayoutActionRefused
from payouts.models import Payout, PayoutStatus
from payouts.release.code import payout_otp_confirm, payout_otp_send
from payouts.release.step import OtpState, OtpStep, otp_step
from staff.models import StaffUser
from tests.identity import client_signed_in
from tests.payouts.live import World, submitted_payout

S = PayoutStatus


def approved(world: World, staff: dict[str, StaffUser]) -> Payout:
    payout = submitted_payout(world, maker=staff["maker"])
    payout_approve(payout=payout, by=staff["approver"])
    return Payout.objects.get(pk=payout.pk)


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


def step_of(payout: Payout) -> OtpStep:
    step = otp_step(Payout.objects.select_related("environment").get(pk=payout.pk))
    assert step is not None
    return step


def test_wrong_code_says_how_many_tries_remain_and_the_right_one_sends(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    code = world.otp_code()
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=wrong(code))
    assert payout.status == S.APPROVED
    assert payout.initiation_error == "Wrong code: 4 tries remain."
    step = step_of(payout)
    assert (step.state, step.tries_left, step.error_code) == (OtpState.WRONG_CODE, 4, "otp_wrong")
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
    assert step_of(payout).state == OtpState.BLOCKED and step_of(payout).tries_left == 0
    calls = world.emulator.witness.count("/payout", "POST")
    with pytest.raises(PayoutActionRefused) as blocked:
        payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    assert blocked.value.code == "otp_blocked" and blocked.value.field == "code"
    assert blocked.value.status == 400 and "Send a new code" in blocked.value.message
    assert world.emulator.witness.count("/payout", "POST") == calls  # refused before any call
    payout_otp_send(payout=payout, by=staff["approver"])
    assert step_of(payout).state == OtpState.SENT and step_of(payout).tries_left == 5
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
    # The upstream's clock said so (ours did not): the step believes it, and refuses the code.
    assert step_of(payout).state == OtpState.EXPIRED
    with pytest.raises(PayoutActionRefused) as expired:
        payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    assert (expired.value.code, expired.value.field) == ("otp_expired", "code")
    payout_otp_send(payout=payout, by=staff["approver"])
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
    assert payout.status == S.CREATED


def test_a_new_code_replaces_the_previous_one_and_gives_the_tries_again(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    first = world.otp_code()
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=wrong(first))
    assert step_of(payout).tries_left == 4
    payout_otp_send(payout=payout, by=staff["approver"])
    second = world.otp_code()
    step = step_of(payout)
    assert (step.state, step.tries_left, step.codes_sent) == (OtpState.SENT, 5, 2)
    assert first != second  # (a one-in-a-million draw would repeat the code)
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=first)
    assert payout.status == S.APPROVED  # the upstream no longer takes the replaced code
    assert step_of(payout).state == OtpState.WRONG_CODE and step_of(payout).tries_left == 4
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=second)
    assert payout.status == S.CREATED and len(world.payouts_upstream()) == 1


def test_a_code_sent_for_another_payout_replaces_this_ones_before_any_call(
    world: World, staff: dict[str, StaffUser]
) -> None:
    mine, other = approved(world, staff), approved(world, staff)
    payout_otp_send(payout=mine, by=staff["approver"])
    my_code = world.otp_code()
    payout_otp_send(payout=other, by=staff["approver2"])
    step = step_of(mine)
    assert step.state == OtpState.REPLACED and f"payout #{other.pk}" in step.message
    calls = world.emulator.witness.count("/payout", "POST")
    with pytest.raises(PayoutActionRefused) as replaced:
        payout_otp_confirm(payout=mine, by=staff["approver"], code=my_code)
    assert (replaced.value.code, replaced.value.field) == ("otp_replaced", "code")
    assert world.emulator.witness.count("/payout", "POST") == calls
    payout_otp_send(payout=mine, by=staff["approver"])
    assert step_of(other).state == OtpState.REPLACED  # and the other way round now
    mine = payout_otp_confirm(payout=mine, by=staff["approver"], code=world.otp_code())
    assert mine.status == S.CREATED


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


def test_sandbox_panel_shows_the_code_from_the_emulator_mailbox(
    world: World, staff: dict[str, StaffUser]
) -> None:
    from django.test import Client

    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    client = client_signed_in(staff["approver"])
    page = client.get(f"/payouts/{payout.pk}/").content.decode()
    assert 'data-testid="sandbox-otp-link"' in page
    assert f'data-testid="sandbox-code">{world.otp_code()}<' in page  # offered on the step
    mailbox = client.get("/sandbox/payouts/otp/", {"payout": payout.pk})
    assert mailbox.status_code == 200
    assert f'data-testid="latest-code">{world.otp_code()}<' in mailbox.content.decode()
    maker = Client()
    maker.force_login(staff["maker"])
    assert maker.get("/sandbox/payouts/otp/", {"payout": payout.pk}).status_code == 403


def test_no_sandbox_panel_with_production_settings() -> None:
    import subprocess
    import sys

    from django.conf import settings

    script = (
        "import django,os;"
        "os.environ['DJANGO_SETTINGS_MODULE']='config.settings.production';"
        "django.setup();from django.apps import apps\n"
        "from django.urls import reverse,NoReverseMatch\n"
        "try:\n reverse('sandbox:otp_mailbox'); print('present')\n"
        "except NoReverseMatch: print('absent')\n"
        "print(apps.is_installed('sandbox'))\n"
        "from payouts.release.code_hints import CODE_HINT_PROVIDERS\n"
        "print(len(CODE_HINT_PROVIDERS))"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SECRET_KEY": "x" * 60,
        "DATABASE_URL": "postgres://u:p@127.0.0.1:5432/none",
        "REDIS_URL": "redis://127.0.0.1:6379/15",
        "DJANGO_ALLOWED_HOSTS": "payops.example",
        "PAYOPS_ENCRYPTION_KEYS": "dGVzdC1lbmNyeXB0aW9uLWtleS1ub3Qtc2VjcmV0ISE=",
        "PAYOPS_S3_BUCKET": "payops-documents",
    }
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=str(settings.BASE_DIR),
        capture_output=True,
        text=True,
        timeout=60,
    )
    # No mailbox page, no sandbox app, and no code offered on the release step.
    assert out.stdout.split() == ["absent", "False", "0"], out.stderr[-2000:]
