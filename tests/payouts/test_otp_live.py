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


def test_sandbox_panel_shows_the_code_from_the_emulator_mailbox(
    world: World, staff: dict[str, StaffUser]
) -> None:
    from django.test import Client

    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    client = Client()
    client.force_login(staff["approver"])
    page = client.get(f"/payouts/{payout.pk}/").content.decode()
    assert 'data-testid="sandbox-otp-link"' in page
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
        "print(apps.is_installed('sandbox'))"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SECRET_KEY": "x" * 60,
        "DATABASE_URL": "postgres://u:p@127.0.0.1:5432/none",
        "REDIS_URL": "redis://127.0.0.1:6379/15",
        "DJANGO_ALLOWED_HOSTS": "payops.example",
        "PAYOPS_ENCRYPTION_KEYS": "dGVzdC1lbmNyeXB0aW9uLWtleS1ub3Qtc2VjcmV0ISE=",
    }
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=str(settings.BASE_DIR),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.split() == ["absent", "False"], out.stderr[-2000:]
