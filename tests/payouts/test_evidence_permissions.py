"""The evidence pack per role, on the page and the API (finance approvers and admins download
it; makers and compliance do not), and the second factor each approval records, from a
session (the kind it verified) and from a token (its step-up)."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.db import transaction
from django.test import Client

from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.models import Approval, ChangeSource, Payout, PayoutStatus
from payouts.states import payout_transition
from staff.api_tokens import api_token_create
from staff.models import AuditEntry, StaffUser
from staff.roles import roles_sync
from staff.second_factor.recovery import recovery_codes_issue
from staff.step_up import SECOND_FACTOR_METHOD_SESSION_KEY
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import client_signed_in, enrolled, stepped_up
from tests.payouts.live import attach_pdf
from tests.staff.second_factor_support import password_signed_in, person

pytestmark = pytest.mark.django_db

MAY_DOWNLOAD = {
    "finance_maker": False,
    "finance_approver": True,
    "compliance": False,
    "admin": True,
}


@pytest.fixture
def environment() -> Environment:
    return make_environment()


@pytest.fixture
def payout(environment: Environment) -> Payout:
    maker = make_staff("finance_maker")
    draft = make_draft(maker=maker, environment=environment, reference="INV-PERM-1")
    attach_pdf(draft, by=maker)
    return draft


def _client(user: StaffUser, environment: Environment) -> Client:
    environment_switch(user=user, environment=environment)
    return client_signed_in(user)


def _zip_names(content: bytes) -> set[str]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return set(archive.namelist())


@pytest.mark.parametrize("role", sorted(MAY_DOWNLOAD))
def test_page_and_api_per_role(role: str, environment: Environment, payout: Payout) -> None:
    client = _client(make_staff(role), environment)
    allowed = MAY_DOWNLOAD[role]
    detail = client.get(f"/payouts/{payout.pk}/")
    assert detail.status_code == 200
    assert (b'data-testid="evidence-download"' in detail.content) is allowed
    page = client.get(f"/payouts/{payout.pk}/evidence/")
    api = client.get(f"/api/v1/payouts/{payout.pk}/evidence")
    if not allowed:
        assert page.status_code == 403
        assert api.status_code == 403 and api.json()["code"] == "permission_denied"
        assert not AuditEntry.objects.filter(action="payout.evidence_downloaded").exists()
        return
    for response in (page, api):
        assert response.status_code == 200
        assert response["Content-Type"] == "application/zip"
        assert "attachment" in response["Content-Disposition"]
        assert response["Cache-Control"] == "private, no-store"
        content = b"".join(response.streaming_content)  # type: ignore[attr-defined]
        assert int(response["Content-Length"]) == len(content)
        assert _zip_names(content) == {
            "evidence.pdf",
            "evidence.json",
            "SHA256SUMS",
            "documents/01-invoice.pdf",
        }
    assert AuditEntry.objects.filter(action="payout.evidence_downloaded").count() == 2


def test_staff_without_a_role_and_signed_out_visitors_get_nothing(
    environment: Environment, payout: Payout
) -> None:
    nobody = StaffUser.objects.create_user("norole@payops.test", "pw-not-secret-123")
    client = _client(nobody, environment)
    assert client.get(f"/payouts/{payout.pk}/evidence/").status_code == 403
    assert client.get(f"/api/v1/payouts/{payout.pk}/evidence").status_code == 403
    assert Client().get(f"/payouts/{payout.pk}/evidence/").status_code == 302  # to sign-in
    assert Client().get(f"/api/v1/payouts/{payout.pk}/evidence").status_code == 401


def test_a_payout_of_another_environment_is_404(environment: Environment, payout: Payout) -> None:
    elsewhere = make_environment("Other sandbox")
    client = _client(make_staff("finance_approver"), elsewhere)
    assert client.get(f"/payouts/{payout.pk}/evidence/").status_code == 404
    assert client.get(f"/api/v1/payouts/{payout.pk}/evidence").status_code == 404


def test_a_read_token_downloads_it(environment: Environment, payout: Payout) -> None:
    approver = make_staff("finance_approver")
    environment_switch(user=approver, environment=environment)
    token = api_token_create(user=approver, name="audit script", scopes=("read",), days=7)
    client = Client(headers={"Authorization": f"Bearer {token.plaintext}"})
    response = client.get(f"/api/v1/payouts/{payout.pk}/evidence")
    assert response.status_code == 200
    assert "evidence.pdf" in _zip_names(b"".join(response.streaming_content))  # type: ignore[attr-defined]


def _pending(payout: Payout) -> Payout:
    with transaction.atomic():
        payout_transition(payout, PayoutStatus.PENDING_APPROVAL, source=ChangeSource.STAFF)
    return Payout.objects.get(pk=payout.pk)


def test_an_approval_on_the_page_records_the_sessions_second_factor(
    environment: Environment, payout: Payout
) -> None:
    payout = _pending(payout)
    approver = make_staff("finance_approver")
    client = _client(approver, environment)
    session = client.session
    session[SECOND_FACTOR_METHOD_SESSION_KEY] = "passkey"
    session.save()
    response = client.post(f"/payouts/{payout.pk}/approve/")
    assert response.status_code in (200, 302)
    approval = Approval.objects.get(payout=payout)
    assert approval.second_factor_method == "passkey"
    assert approval.second_factor_at is not None


def test_an_approval_by_token_records_the_tokens_step_up(
    environment: Environment, payout: Payout
) -> None:
    payout = _pending(payout)
    approver = stepped_up(make_staff("finance_approver"))
    environment_switch(user=approver, environment=environment)
    token = api_token_create(
        user=approver, by=approver, name="approvals", scopes=("read", "approve"), days=30
    )
    client = Client(headers={"Authorization": f"Bearer {token.plaintext}"})
    response = client.post(f"/api/v1/payouts/{payout.pk}/approve", content_type="application/json")
    assert response.status_code == 200, response.content
    approval = Approval.objects.get(payout=payout)
    assert approval.second_factor_method == "api_token"
    assert approval.second_factor_at == token.token.stepped_up_at


def test_a_sign_in_with_a_recovery_code_is_what_the_approval_records(
    environment: Environment, payout: Payout
) -> None:
    """The whole path: the sign-in page's second factor sets the session's method, the proof
    middleware reads it, payout_approve stores it."""
    payout = _pending(payout)
    roles_sync()
    approver = person("approver-recovery@pay.test", "finance_approver")
    enrolled(approver)
    codes = recovery_codes_issue(user=approver, by=approver)
    environment_switch(user=approver, environment=environment)
    client = password_signed_in(approver)
    assert client.post("/login/second-factor/", {"code": codes[0]}).status_code == 302
    assert client.session[SECOND_FACTOR_METHOD_SESSION_KEY] == "recovery_code"
    client.post(f"/payouts/{payout.pk}/approve/")
    approval = Approval.objects.get(payout=payout)
    assert (approval.approver, approval.second_factor_method) == (approver, "recovery_code")
