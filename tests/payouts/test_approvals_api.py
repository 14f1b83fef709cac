"""The maker-checker API: same services and rules as the pages, one error shape, per role."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.states import payout_transition
from staff.models import StaffUser
from tests.finance import make_draft, make_environment
from tests.identity import client_signed_in
from tests.payouts.live import World, submitted_payout

S = PayoutStatus


def client_for(user: StaffUser) -> Client:
    return client_signed_in(user)  # past sign-in's second factor


def post(client: Client, path: str, body: dict[str, Any] | None = None) -> Any:
    return client.post(
        f"/api/v1{path}", data=json.dumps(body or {}), content_type="application/json"
    )


def pending_offline(staff: dict[str, StaffUser], count: int = 1) -> list[Payout]:
    from gateway.models import Environment

    environment = Environment.objects.first() or make_environment()
    payouts = []
    for _ in range(count):
        payout = make_draft(maker=staff["maker"], environment=environment)
        payout_transition(payout, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=staff["maker"])
        payouts.append(payout)
    return payouts


@pytest.mark.parametrize(
    ("who", "status", "code"),
    [
        # Refused by the API's auth step, before the service (config.api.OPERATION_PERMISSIONS).
        ("maker", 403, "permission_denied"),
        ("maker_approver", 200, None),
        # Admins pass the auth step (a chain step may name the admin role); the service refuses
        # them where no step of this payout's chain does.
        ("admin", 403, "not_permitted"),
        ("approver", 200, None),
    ],
)
def test_approve_endpoint_per_role(
    staff: dict[str, StaffUser], who: str, status: int, code: str | None
) -> None:
    (payout,) = pending_offline(staff)
    response = post(client_for(staff[who]), f"/payouts/{payout.pk}/approve")
    assert response.status_code == status, response.content
    body = response.json()
    if code:
        assert body["code"] == code and body["message"]
    else:
        assert body["status"] == "approved" and body["complete"] is True
        assert body["approvals"][0]["email"] == staff[who].email


def test_maker_is_refused_by_the_api_as_by_the_page(staff: dict[str, StaffUser]) -> None:
    from gateway.models import Environment

    environment = Environment.objects.first() or make_environment()
    payout = make_draft(maker=staff["maker_approver"], environment=environment)
    payout_transition(payout, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=payout.maker)
    response = post(client_for(staff["maker_approver"]), f"/payouts/{payout.pk}/approve")
    assert response.status_code == 403 and response.json()["code"] == "maker"


def test_reject_needs_a_reason_on_its_field(staff: dict[str, StaffUser]) -> None:
    (payout,) = pending_offline(staff)
    client = client_for(staff["approver"])
    response = post(client, f"/payouts/{payout.pk}/reject", {"reason": ""})
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "reason", "message": "Say why the payout is rejected."}
    ]
    response = post(client, f"/payouts/{payout.pk}/reject", {"reason": "wrong invoice"})
    assert response.status_code == 200
    assert response.json()["status"] == "rejected"
    assert response.json()["rejection_reason"] == "wrong invoice"


def test_cancel_endpoint(staff: dict[str, StaffUser]) -> None:
    (payout,) = pending_offline(staff)
    assert post(client_for(staff["admin"]), f"/payouts/{payout.pk}/cancel").status_code == 403
    response = post(client_for(staff["maker"]), f"/payouts/{payout.pk}/cancel", {"reason": "dup"})
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    again = post(client_for(staff["maker"]), f"/payouts/{payout.pk}/cancel")
    assert again.status_code == 409 and again.json()["code"] == "not_cancellable"


def test_inbox_waiting_for_me_and_for_anyone(staff: dict[str, StaffUser]) -> None:
    own = make_draft(maker=staff["maker_approver"], environment=make_environment())
    payout_transition(own, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=own.maker)
    others = pending_offline(staff, count=2)
    client = client_for(staff["maker_approver"])
    mine = client.get("/api/v1/approvals", {"environment": own.environment.name}).json()
    # Their own payout is never waiting for them, though it waits for anyone.
    assert {item["id"] for item in mine} == {p.pk for p in others}
    anyone = client.get(
        "/api/v1/approvals", {"scope": "anyone", "environment": own.environment.name}
    ).json()
    assert {item["id"] for item in anyone} == {own.pk, *(p.pk for p in others)}
    approver = client_for(staff["approver"])
    env = others[0].environment.name
    listed = approver.get("/api/v1/approvals", {"environment": env}).json()
    assert {i["id"] for i in listed} == {own.pk, *(p.pk for p in others)}
    post(approver, f"/payouts/{others[0].pk}/approve?environment={env}")
    waiting = approver.get("/api/v1/approvals", {"environment": env}).json()
    assert {i["id"] for i in waiting} == {own.pk, others[1].pk}
    bad = approver.get("/api/v1/approvals", {"scope": "everyone", "environment": env})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "scope"


def test_inbox_costs_the_same_queries_for_one_or_many(staff: dict[str, StaffUser]) -> None:
    client = client_for(staff["approver"])
    (first,) = pending_offline(staff, count=1)
    env = first.environment.name
    client.get("/api/v1/approvals", {"environment": env})  # warm the session and permissions
    with CaptureQueriesContext(connection) as one:
        client.get("/api/v1/approvals", {"environment": env})
    pending_offline(staff, count=6)
    with CaptureQueriesContext(connection) as many:
        response = client.get("/api/v1/approvals", {"environment": env})
    assert len(response.json()) == 7
    assert len(many) == len(one)


def test_otp_send_and_confirm_endpoints_against_the_emulator(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = submitted_payout(world, maker=staff["maker"])
    env = world.environment.name
    approver = client_for(staff["approver"])
    assert post(approver, f"/payouts/{payout.pk}/approve?environment={env}").status_code == 200
    maker = client_for(staff["maker"])
    assert post(maker, f"/payouts/{payout.pk}/otp/send?environment={env}").status_code == 403
    sent = post(approver, f"/payouts/{payout.pk}/otp/send?environment={env}")
    assert sent.status_code == 200, sent.content
    assert set(sent.json()) == {"sent_to", "expires_at", "replaced_previous", "otp"}
    assert sent.json()["sent_to"] == world.environment.verification_email
    short = post(approver, f"/payouts/{payout.pk}/otp/confirm?environment={env}", {"code": "12"})
    assert short.status_code == 400 and short.json()["errors"][0]["field"] == "code"
    confirmed = post(
        approver, f"/payouts/{payout.pk}/otp/confirm?environment={env}", {"code": world.otp_code()}
    )
    assert confirmed.status_code == 202, confirmed.content
    payout.refresh_from_db()
    assert payout.status == S.CREATED  # the worker (inline here) sent it
    assert len(world.payouts_upstream()) == 1
