"""The release step over the API: the same service and words as the page; tries, expiry, and
every refused code as a 400 on `code`, never a 5xx."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from payouts.approval.services import payout_approve
from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.states import payout_transition
from staff.audit import audit_record
from staff.models import StaffUser
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import client_signed_in
from tests.payouts.live import World, submitted_payout

S = PayoutStatus


def client_for(user: StaffUser) -> Client:
    return client_signed_in(user)


def post(client: Client, path: str, body: dict[str, Any] | None = None) -> Any:
    return client.post(
        f"/api/v1{path}", data=json.dumps(body or {}), content_type="application/json"
    )


def approved_offline(staff: dict[str, StaffUser], *, wrong: int = 0, minutes: float = 9) -> Payout:
    """An approved fiat payout whose code was sent (as payout_otp_send records it)."""
    environment = make_environment()
    environment.verification_email = "payout-otp@payops.test"
    environment.save(update_fields=["verification_email"])
    payout = make_draft(maker=staff["maker"], environment=environment)
    for status in (S.PENDING_APPROVAL, S.APPROVED):
        payout_transition(payout, status, source=ChangeSource.STAFF, by=staff["maker"])
    payout.otp_sent_to = environment.verification_email
    payout.otp_expires_at = timezone.now() + timedelta(minutes=minutes)
    payout.otp_failed_attempts = wrong
    payout.save(update_fields=["otp_sent_to", "otp_expires_at", "otp_failed_attempts"])
    audit_record(actor=staff["approver"], action="payout.otp_sent", target=payout, details={})
    return payout


def test_the_step_reads_as_on_the_page(staff: dict[str, StaffUser]) -> None:
    payout = approved_offline(staff, wrong=1)
    for who in ("approver", "maker"):  # every payout reader follows it
        response = client_for(staff[who]).get(f"/api/v1/payouts/{payout.pk}/otp")
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["state"] == "wrong_code" and body["error_code"] == "otp_wrong"
        assert (body["tries_left"], body["max_tries"], body["codes_sent"]) == (4, 5, 1)
        assert body["message"] == "Wrong code: 4 tries left. Enter the code from the newest email."
        assert body["sent_to"] == "p•••@payops.test" and body["expires_at"] and body["sent_at"]
        assert body["can_confirm"] is True and body["can_send"] is True


def test_a_payout_without_a_step_says_so(staff: dict[str, StaffUser]) -> None:
    payout = make_draft(maker=staff["maker"])
    response = client_for(staff["approver"]).get(f"/api/v1/payouts/{payout.pk}/otp")
    assert response.status_code == 409 and response.json()["code"] == "no_otp_step"
    assert "draft" in response.json()["message"]


@pytest.mark.parametrize(
    ("wrong", "minutes", "code", "words"),
    [
        (5, 9, "otp_blocked", "this code is blocked (0 tries left). Send a new code"),
        (0, -1, "otp_expired", "The code expired"),
    ],
)
def test_a_code_that_cannot_work_is_a_400_on_the_code_field(
    staff: dict[str, StaffUser], wrong: int, minutes: float, code: str, words: str
) -> None:
    payout = approved_offline(staff, wrong=wrong, minutes=minutes)
    response = post(
        client_for(staff["approver"]), f"/payouts/{payout.pk}/otp/confirm", {"code": "123456"}
    )
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == code and words in body["message"]
    assert body["errors"] == [{"field": "code", "message": body["message"]}]
    payout.refresh_from_db()
    assert payout.status == S.APPROVED


@pytest.mark.parametrize(
    ("who", "code"),
    [
        ("maker", "permission_denied"),
        ("maker_approver", "maker"),
        ("compliance", "permission_denied"),
    ],
)
def test_only_an_approver_other_than_the_maker_sends_or_confirms(
    staff: dict[str, StaffUser], who: str, code: str
) -> None:
    people = {**staff, "compliance": make_staff("compliance")}
    if who == "maker_approver":
        people["maker"] = staff["maker_approver"]
    payout = approved_offline(people)
    client = client_for(people[who])
    sent = post(client, f"/payouts/{payout.pk}/otp/send")
    assert sent.status_code == 403 and sent.json()["code"] == code
    confirmed = post(client, f"/payouts/{payout.pk}/otp/confirm", {"code": "123456"})
    assert confirmed.status_code == 403 and confirmed.json()["code"] == code
    payout.refresh_from_db()
    assert payout.status == S.APPROVED


def test_send_resend_wrong_then_right_against_the_emulator(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = submitted_payout(world, maker=staff["maker"])
    payout_approve(payout=payout, by=staff["approver"])
    client = client_for(staff["approver"])
    first = post(client, f"/payouts/{payout.pk}/otp/send").json()
    assert first["replaced_previous"] is False and first["otp"]["state"] == "sent"
    again = post(client, f"/payouts/{payout.pk}/otp/send").json()
    assert again["replaced_previous"] is True and again["otp"]["codes_sent"] == 2
    assert again["otp"]["tries_left"] == 5
    code = world.otp_code()
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    answer = post(client, f"/payouts/{payout.pk}/otp/confirm", {"code": wrong})
    assert answer.status_code == 202  # the upstream checks it as it receives the payout
    step = client.get(f"/api/v1/payouts/{payout.pk}/otp").json()
    assert (step["state"], step["tries_left"], step["error_code"]) == ("wrong_code", 4, "otp_wrong")
    released = post(client, f"/payouts/{payout.pk}/otp/confirm", {"code": code})
    assert released.status_code == 202 and released.json()["status"] == "created"
    assert released.json()["otp"] is None  # released: no step any more
    assert client.get(f"/api/v1/payouts/{payout.pk}/otp").status_code == 409
