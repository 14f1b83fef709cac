"""The release step against the emulator, through its HTMX fragments: send, resend, confirm.

The sandbox app is installed in the test settings, so its provider offers the emulator's
mailbox code on the step, as a person sees it in development.
"""

from __future__ import annotations

from django.test import Client

from payouts.approval.services import payout_approve
from payouts.models import Payout, PayoutStatus
from staff.models import AuditEntry, StaffUser
from tests.identity import client_signed_in
from tests.payouts.live import World, submitted_payout

S = PayoutStatus
HX = {"HTTP_HX_REQUEST": "true"}


def approved(world: World, staff: dict[str, StaffUser]) -> Payout:
    payout = submitted_payout(world, maker=staff["maker"])
    payout_approve(payout=payout, by=staff["approver"])
    return Payout.objects.get(pk=payout.pk)


def approver(staff: dict[str, StaffUser]) -> Client:
    return client_signed_in(staff["approver"])


def test_send_then_resend_swap_the_step_and_offer_the_newest_code(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = approved(world, staff)
    client = approver(staff)
    sent = client.post(f"/payouts/{payout.pk}/otp/send/", **HX).content.decode()
    assert sent.lstrip().startswith('<section class="panel" id="release-step"')  # the step only
    assert 'data-otp-state="sent"' in sent and 'data-testid="otp-ok">Code sent.<' in sent
    first = world.otp_code()
    assert f'data-testid="sandbox-code">{first}<' in sent and "Sandbox only" in sent
    assert f'data-fill-code="{first}"' in sent and "autofocus" in sent
    resent = client.post(f"/payouts/{payout.pk}/otp/send/", **HX).content.decode()
    second = world.otp_code()
    assert "New code sent: it replaces the previous code, which no longer works." in resent
    assert f'data-testid="sandbox-code">{second}<' in resent
    assert "code 2: it replaced the earlier codes" in resent
    assert AuditEntry.objects.filter(action="payout.otp_sent").count() == 2


def test_a_wrong_code_comes_back_with_the_tries_left_then_the_right_one_releases(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = approved(world, staff)
    client = approver(staff)
    client.post(f"/payouts/{payout.pk}/otp/send/", **HX)
    code = world.otp_code()
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    response = client.post(f"/payouts/{payout.pk}/otp/confirm/", {"code": wrong}, **HX)
    html = response.content.decode()
    assert 'data-otp-state="wrong_code"' in html and "Wrong code: 4 tries left." in html
    assert 'data-testid="otp-tries">4 of 5<' in html
    # The payout moved (submitting, then back here): the step re-reads the region at once.
    assert 'hx-trigger="load"' in html and 'hx-target="#payout-live"' in html
    response = client.post(f"/payouts/{payout.pk}/otp/confirm/", {"code": code}, **HX)
    html = response.content.decode()
    assert 'data-otp-state="released"' in html and "Code entered: sending the payout." in html
    assert 'hx-trigger="load"' in html
    region = client.get(f"/payouts/{payout.pk}/live/").content.decode()
    assert 'data-testid="payout-status">Created<' in region
    assert 'id="release-step"' not in region  # released: the step is done
    payout.refresh_from_db()
    assert payout.status == S.CREATED and len(world.payouts_upstream()) == 1
