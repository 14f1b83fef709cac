"""The sandbox mailbox page, with and without `?payout=`, and its provider of the step's hint."""

from __future__ import annotations

from django.test import Client

from gateway.models import Environment, EnvironmentKind
from gateway.services.environments import environment_switch
from payouts.approval.services import payout_approve
from payouts.models import Payout
from payouts.release.code import payout_otp_send
from sandbox.otp_views import emulator_mailbox_hint
from staff.models import StaffUser
from tests.gateway.conftest import _fresh_shared_state, live_emulator, sandbox  # noqa: F401
from tests.identity import client_signed_in
from tests.payouts.conftest import q_sync, staff, world  # noqa: F401
from tests.payouts.live import World, submitted_payout


def client_for(user: StaffUser) -> Client:
    return client_signed_in(user)


def sent_payout(world: World, staff: dict[str, StaffUser]) -> Payout:  # noqa: F811
    payout = submitted_payout(world, maker=staff["maker"])
    payout_approve(payout=payout, by=staff["approver"])
    payout_otp_send(payout=payout, by=staff["approver"])
    return Payout.objects.select_related("environment").get(pk=payout.pk)


def test_the_mailbox_lists_the_environments_codes_with_and_without_a_payout(
    world: World,  # noqa: F811
    staff: dict[str, StaffUser],  # noqa: F811
) -> None:
    payout = sent_payout(world, staff)
    client = client_for(staff["approver"])
    for query in ({"payout": payout.pk}, {}):
        response = client.get("/sandbox/payouts/otp/", query)
        html = response.content.decode()
        assert response.status_code == 200, html
        assert f'data-testid="latest-code">{world.otp_code()}<' in html
        assert "<time datetime=" in html and "UTC" in html  # the time component, not raw ISO
        assert "'code':" not in html and "{'" not in html  # no Python dicts as a banner
        assert 'class="messages"' not in html  # Django's messages stay Django's
        assert "Sandbox only" in html
        assert ('data-testid="back-to-payout"' in html) == bool(query)


def test_the_mailbox_explains_instead_of_failing(
    world: World,  # noqa: F811
    staff: dict[str, StaffUser],  # noqa: F811
) -> None:
    client = client_for(staff["approver"])
    Environment.objects.filter(pk=world.environment.pk).update(verification_email="")
    response = client.get("/sandbox/payouts/otp/")
    assert response.status_code == 200
    assert "has no verification email" in response.content.decode()
    assert client.get("/sandbox/payouts/otp/", {"payout": "x"}).status_code == 404
    assert client.get("/sandbox/payouts/otp/", {"payout": 999999}).status_code == 404
    assert client_for(staff["maker"]).get("/sandbox/payouts/otp/").status_code == 403


def test_a_production_environment_has_no_mailbox_and_no_hint(
    world: World,  # noqa: F811
    staff: dict[str, StaffUser],  # noqa: F811
) -> None:
    payout = sent_payout(world, staff)
    assert emulator_mailbox_hint(payout) is not None  # sandbox: offered
    Environment.objects.filter(pk=world.environment.pk).update(kind=EnvironmentKind.PRODUCTION)
    payout = Payout.objects.select_related("environment").get(pk=payout.pk)
    assert emulator_mailbox_hint(payout) is None
    environment_switch(user=staff["approver"], environment=payout.environment, confirmed=True)
    response = client_for(staff["approver"]).get("/sandbox/payouts/otp/")
    assert response.status_code == 404
    assert "no sandbox mailbox to read" in response.content.decode()
    assert 'data-testid="latest-code"' not in response.content.decode()


def test_the_hint_is_the_newest_code_sent_where_this_payouts_code_went(
    world: World,  # noqa: F811
    staff: dict[str, StaffUser],  # noqa: F811
) -> None:
    payout = sent_payout(world, staff)
    hint = emulator_mailbox_hint(payout)
    assert hint is not None and hint.code == world.otp_code() and hint.sent_at is not None
    assert hint.more_url == f"/sandbox/payouts/otp/?payout={payout.pk}"
    payout_otp_send(payout=payout, by=staff["approver"])
    newest = emulator_mailbox_hint(payout)
    assert newest is not None and newest.code == world.otp_code()
