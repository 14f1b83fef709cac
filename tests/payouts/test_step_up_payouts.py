"""Step-up on the payouts' sensitive actions: approve, release (the code confirm), the approval
policy; in the services, on the pages (redirect, HX-Redirect, the notice) and on the API."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.messages import get_messages
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from gateway.models import Environment
from payouts.approval.policy import approval_policy_publish
from payouts.approval.services import payout_approve, payout_reject
from payouts.errors import PayoutActionRefused
from payouts.models import Approval, ApprovalPolicy, ChangeSource, Payout, PayoutStatus
from payouts.release.code import payout_otp_confirm
from payouts.states import payout_transition
from staff.models import AuditEntry, StaffUser
from staff.step_up import SECOND_FACTOR_AT_SESSION_KEY, Proof, StepUpRequired, proof_attach
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import client_signed_in, stepped_up

S = PayoutStatus
STEP_UP = reverse("staff:step_up")


def plain(user: StaffUser) -> StaffUser:
    """The same person with no second factor behind this request (a fresh object, no proof)."""
    return StaffUser.objects.get(pk=user.pk)


def stale(user: StaffUser, settings_minutes: int) -> StaffUser:
    """The person whose second factor was verified just over PAYOPS_STEP_UP_MINUTES ago."""
    person = plain(user)
    at = timezone.now() - timedelta(minutes=settings_minutes, seconds=5)
    proof_attach(person, Proof(method="session", second_factor_at=at))
    return person


def pending(staff: dict[str, StaffUser], maker: str = "maker") -> Payout:
    environment = Environment.objects.first() or make_environment()
    environment.verification_email = "payout-otp@payops.test"
    environment.save(update_fields=["verification_email"])
    payout = make_draft(maker=staff[maker], environment=environment)
    payout_transition(payout, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=staff[maker])
    return Payout.objects.get(pk=payout.pk)


def approved_with_code(staff: dict[str, StaffUser]) -> Payout:
    payout = pending(staff)
    payout_transition(payout, S.APPROVED, source=ChangeSource.STAFF, by=staff["maker"])
    payout.otp_sent_to = "payout-otp@payops.test"
    payout.otp_expires_at = timezone.now() + timedelta(minutes=9)
    payout.save(update_fields=["otp_sent_to", "otp_expires_at"])
    return Payout.objects.get(pk=payout.pk)


def step_up_next(location: str) -> str:
    parts = urlsplit(location)
    assert parts.path == STEP_UP, location
    return parse_qs(parts.query)["next"][0]


# --- Services -----------------------------------------------------------------------------------


def test_approve_without_a_second_factor_is_refused_and_changes_nothing(
    staff: dict[str, StaffUser],
) -> None:
    payout = pending(staff)
    with pytest.raises(StepUpRequired) as refused:
        payout_approve(payout=payout, by=plain(staff["approver"]))
    assert (refused.value.status, refused.value.code) == (403, "step_up_required")
    assert refused.value.action == "payout.approve"
    assert not Approval.objects.exists()
    assert not AuditEntry.objects.filter(action="payout.approved").exists()
    payout.refresh_from_db()
    assert payout.status == S.PENDING_APPROVAL


def test_approve_with_a_fresh_second_factor_counts(staff: dict[str, StaffUser]) -> None:
    payout = pending(staff)
    outcome = payout_approve(payout=payout, by=stepped_up(plain(staff["approver"])))
    assert outcome.complete and outcome.payout.status == S.APPROVED
    assert AuditEntry.objects.filter(action="payout.approved").count() == 1


def test_a_second_factor_older_than_the_window_is_stale(
    staff: dict[str, StaffUser], settings: object
) -> None:
    settings.PAYOPS_STEP_UP_MINUTES = 3  # type: ignore[attr-defined]
    payout = pending(staff)
    with pytest.raises(StepUpRequired):
        payout_approve(payout=payout, by=stale(staff["approver"], 3))
    assert not Approval.objects.exists()
    # Within the window (configured, not the default 5 minutes) it counts.
    person = plain(staff["approver"])
    at = timezone.now() - timedelta(minutes=2)
    proof_attach(person, Proof(method="session", second_factor_at=at))
    assert payout_approve(payout=payout, by=person).complete


def test_without_the_approver_permission_the_refusal_is_the_permission(
    staff: dict[str, StaffUser],
) -> None:
    payout = pending(staff)
    with pytest.raises(PayoutActionRefused) as refused:
        payout_approve(payout=payout, by=plain(staff["admin"]))
    assert (refused.value.status, refused.value.code) == (403, "not_permitted")
    with pytest.raises(PermissionDenied):
        payout_otp_confirm(payout=payout, by=plain(staff["maker"]), code="123456")


def test_step_up_is_asked_before_the_payout_rules(staff: dict[str, StaffUser]) -> None:
    """The maker holding the approver role is asked for a second factor first, then refused."""
    payout = pending(staff, maker="maker_approver")
    person = plain(staff["maker_approver"])
    with pytest.raises(StepUpRequired):
        payout_approve(payout=payout, by=person)
    with pytest.raises(PayoutActionRefused) as refused:
        payout_approve(payout=payout, by=stepped_up(person))
    assert refused.value.code == "maker"


def test_reject_needs_no_step_up(staff: dict[str, StaffUser]) -> None:
    payout = pending(staff)
    payout_reject(payout=payout, by=plain(staff["approver"]), reason="Missing invoice")
    payout.refresh_from_db()
    assert payout.status == S.REJECTED


def test_release_without_a_second_factor_is_refused_before_any_check(
    staff: dict[str, StaffUser],
) -> None:
    payout = approved_with_code(staff)
    with pytest.raises(StepUpRequired) as refused:
        payout_otp_confirm(payout=payout, by=plain(staff["approver"]), code="123456")
    assert refused.value.action == "payout.release"
    assert not AuditEntry.objects.filter(action="payout.otp_entered").exists()
    payout.refresh_from_db()
    assert payout.status == S.APPROVED and not payout.submitted_upstream


def test_release_with_a_fresh_second_factor_reaches_the_code_rules(
    staff: dict[str, StaffUser],
) -> None:
    """Past step-up, the next rule speaks (here: the code expired); the emulator journeys
    (test_otp_api, test_release_step_live) release with one end to end."""
    payout = approved_with_code(staff)
    Payout.objects.filter(pk=payout.pk).update(otp_expires_at=timezone.now() - timedelta(1))
    with pytest.raises(PayoutActionRefused) as refused:
        payout_otp_confirm(payout=payout, by=stepped_up(plain(staff["approver"])), code="123456")
    assert refused.value.code == "otp_expired"


def test_policy_publish_needs_a_fresh_second_factor(staff: dict[str, StaffUser]) -> None:
    with pytest.raises(StepUpRequired) as refused:
        approval_policy_publish(by=plain(staff["admin"]), default_required=2, rules=[])
    assert refused.value.action == "approval_policy.publish"
    assert not ApprovalPolicy.objects.exists()
    assert not AuditEntry.objects.filter(action="approval_policy.published").exists()
    policy = approval_policy_publish(
        by=stepped_up(plain(staff["admin"])), default_required=2, rules=[]
    )
    assert policy.version == 1
    with pytest.raises(PermissionDenied):  # the permission first, even stepped up
        approval_policy_publish(
            by=stepped_up(plain(staff["approver"])), default_required=1, rules=[]
        )


# --- Pages --------------------------------------------------------------------------------------


def test_posting_approve_without_freshness_redirects_to_step_up_back_to_the_payout(
    staff: dict[str, StaffUser],
) -> None:
    payout = pending(staff)
    client = client_signed_in(staff["approver"], second_factor=False)
    page = f"/payouts/{payout.pk}/"
    response = client.post(f"{page}approve/", HTTP_REFERER=f"http://testserver{page}")
    assert response.status_code == 302
    assert step_up_next(response["Location"]) == page
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert any("second factor" in m for m in said)
    assert not Approval.objects.exists()


def test_a_session_whose_second_factor_is_stale_is_sent_to_step_up(
    staff: dict[str, StaffUser], settings: Any
) -> None:
    settings.PAYOPS_STEP_UP_MINUTES = 5
    payout = pending(staff)
    client = client_signed_in(staff["approver"])
    session = client.session
    at = timezone.now() - timedelta(minutes=5, seconds=5)
    session[SECOND_FACTOR_AT_SESSION_KEY] = at.isoformat()
    session.save()
    response = client.post(f"/payouts/{payout.pk}/approve/")
    assert response.status_code == 302 and urlsplit(response["Location"]).path == STEP_UP
    assert not Approval.objects.exists()


def test_an_offsite_referer_is_not_where_step_up_comes_back(staff: dict[str, StaffUser]) -> None:
    payout = pending(staff)
    client = client_signed_in(staff["approver"], second_factor=False)
    response = client.post(
        f"/payouts/{payout.pk}/approve/", HTTP_REFERER="https://evil.example/phish"
    )
    assert step_up_next(response["Location"]) == f"/payouts/{payout.pk}/approve/"


def test_htmx_approve_without_freshness_answers_hx_redirect(staff: dict[str, StaffUser]) -> None:
    payout = pending(staff)
    client = client_signed_in(staff["approver"], second_factor=False)
    response = client.post(
        f"/payouts/{payout.pk}/approve/",
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver/payouts/{payout.pk}/?tab=approvals",
    )
    assert response.status_code == 200
    assert step_up_next(response["HX-Redirect"]) == f"/payouts/{payout.pk}/?tab=approvals"
    assert not Approval.objects.exists()


def test_htmx_release_without_freshness_answers_hx_redirect(staff: dict[str, StaffUser]) -> None:
    payout = approved_with_code(staff)
    client = client_signed_in(staff["approver"], second_factor=False)
    response = client.post(
        f"/payouts/{payout.pk}/otp/confirm/",
        {"code": "123456"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver/payouts/{payout.pk}/",
    )
    assert step_up_next(response["HX-Redirect"]) == f"/payouts/{payout.pk}/"
    assert not AuditEntry.objects.filter(action="payout.otp_entered").exists()


def test_bulk_approve_without_freshness_comes_back_to_the_inbox(
    staff: dict[str, StaffUser],
) -> None:
    payout = pending(staff)
    client = client_signed_in(staff["approver"], second_factor=False)
    inbox = client.get("/payouts/approvals/?scope=anyone").content.decode()
    assert 'data-testid="step-up-notice"' in inbox and "next=%2Fpayouts%2Fapprovals%2F" in inbox
    confirm = client.post("/payouts/approvals/approve/", {"payout": [str(payout.pk)]})
    assert 'data-testid="step-up-notice"' in confirm.content.decode()
    response = client.post(
        "/payouts/approvals/approve/", {"payout": [str(payout.pk)], "confirm": "yes"}
    )
    assert step_up_next(response["Location"]) == reverse("payouts:approvals")
    assert not Approval.objects.exists()


def test_policy_publish_page_without_freshness_redirects(staff: dict[str, StaffUser]) -> None:
    client = client_signed_in(staff["admin"], second_factor=False)
    url = reverse("payouts:approval_policy")
    assert 'data-testid="step-up-notice"' in client.get(url).content.decode()
    response = client.post(
        url,
        {"default_required": "2", "rules": "", "note": "", "action": "publish"},
        HTTP_REFERER=f"http://testserver{url}",
    )
    assert step_up_next(response["Location"]) == url
    assert not ApprovalPolicy.objects.exists()


@pytest.mark.parametrize("fresh", [True, False])
def test_the_approve_and_release_forms_say_when_a_second_factor_is_needed(
    staff: dict[str, StaffUser], fresh: bool
) -> None:
    waiting, releasing = pending(staff), approved_with_code(staff)
    client = client_signed_in(staff["approver"], second_factor=fresh)
    for payout in (waiting, releasing):
        html = client.get(f"/payouts/{payout.pk}/").content.decode()
        assert ('data-testid="step-up-notice"' in html) is not fresh, payout.status
        if not fresh:
            assert f"{STEP_UP}?next=%2Fpayouts%2F{payout.pk}%2F" in html


@pytest.mark.parametrize("role", ["finance_maker", "compliance"])
def test_roles_without_the_approver_permission_see_no_notice_and_get_403(
    staff: dict[str, StaffUser], role: str
) -> None:
    payout = pending(staff)
    person = make_staff(role)
    client = client_signed_in(person, second_factor=False)
    html = client.get(f"/payouts/{payout.pk}/").content.decode()
    assert 'data-testid="step-up-notice"' not in html
    api = client.post(f"/api/v1/payouts/{payout.pk}/approve", content_type="application/json")
    assert api.status_code == 403 and api.json()["code"] in ("not_permitted", "permission_denied")


# --- API ----------------------------------------------------------------------------------------


def test_the_api_answers_403_step_up_required_never_a_redirect(
    staff: dict[str, StaffUser],
) -> None:
    waiting, releasing = pending(staff), approved_with_code(staff)
    client = client_signed_in(staff["approver"], second_factor=False)
    for path, body in (
        (f"/api/v1/payouts/{waiting.pk}/approve", {}),
        (f"/api/v1/payouts/{releasing.pk}/otp/confirm", {"code": "123456"}),
    ):
        environment = Payout.objects.get(pk=path.split("/")[4]).environment.name
        response = client.post(
            f"{path}?environment={environment}",
            data=json.dumps(body),
            content_type="application/json",
        )
        assert response.status_code == 403, response.content
        assert response.json()["code"] == "step_up_required"
        assert set(response.json()) == {"code", "message", "errors"}
    assert not Approval.objects.exists()
    fresh = client_signed_in(staff["approver"])
    response = fresh.post(
        f"/api/v1/payouts/{waiting.pk}/approve?environment={waiting.environment.name}",
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
