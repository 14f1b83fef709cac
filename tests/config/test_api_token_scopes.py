"""Scoped, expiring API tokens (issue 19 item 3): what each scope reaches, expiry, revocation,
privileged tokens only after step-up and for 90 days at most, the command, /me, the profile page
and openapi.json for a bearer token."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from staff.api_tokens import api_token_create, api_token_revoke
from staff.errors import ServiceError
from staff.models import ApiToken, AuditEntry, StaffUser
from staff.roles import ENVIRONMENTS_MANAGE, PAYOUT_APPROVE, TOKEN_SCOPES, scope_permissions
from staff.step_up import Proof, StepUpRequired, proof_attach, step_up_fresh
from tests.finance import make_environment
from tests.identity import client_signed_in, stepped_up, token_with_scopes

pytestmark = pytest.mark.django_db

ALL = tuple(TOKEN_SCOPES)


def bearer(user: StaffUser, scopes: tuple[str, ...], days: int = 30) -> dict[str, str]:
    # As stored, even beyond the owner's roles (a token from before they lost a role).
    return {"Authorization": f"Bearer {token_with_scopes(user, scopes, days=days)}"}


def call(method: str, path: str, headers: dict[str, str], body: Any = None) -> Any:
    client = Client()
    if method == "GET":
        return client.get(f"/api/v1{path}", headers=headers)
    return getattr(client, method.lower())(
        f"/api/v1{path}",
        b"{" if body is None else json.dumps(body),
        content_type="application/json",
        headers=headers,
    )


# (role, method, path, the scope it needs). Bodies are invalid on purpose: an allowed call stops
# at validation (400) or at the missing record (404), so nothing reaches the upstream.
REPRESENTATIVE = [
    ("finance_maker", "GET", "/payouts", "read"),
    ("finance_maker", "POST", "/quotes", "prepare"),
    ("finance_maker", "POST", "/payouts", "prepare"),
    ("finance_approver", "POST", "/payouts/999999/approve", "approve"),
    ("finance_approver", "POST", "/payouts/999999/otp/confirm", "approve"),
    ("admin", "GET", "/webhooks/endpoints", "admin"),
    ("admin", "POST", "/webhooks/events/reprocess", "admin"),
    ("compliance", "POST", "/end-users/999999/kyc-review", "prepare"),
]
SCOPE_SETS = [("read",), ("prepare",), ("approve",), ("admin",), ("read", "prepare"), ALL]


@pytest.mark.parametrize("scopes", SCOPE_SETS, ids="+".join)
def test_each_scope_reaches_exactly_its_endpoints(
    demo_staff: dict[str, StaffUser], scopes: tuple[str, ...]
) -> None:
    make_environment()
    for role, method, path, needed in REPRESENTATIVE:
        response = call(method, path, bearer(demo_staff[role], scopes))
        allowed = needed in scopes
        assert (response.status_code != 403) is allowed, (role, method, path, scopes, response)
        assert response.status_code < 500
        if not allowed:
            assert response.json()["code"] == "permission_denied"


def test_a_read_only_token_cannot_reach_a_write_guarded_by_a_view_permission(
    demo_staff: dict[str, StaffUser],
) -> None:
    make_environment()
    compliance = demo_staff["compliance"]
    # Refreshing is guarded by the directory's view permission, yet it writes.
    refused = call("POST", "/end-users/999999/refresh", bearer(compliance, ("read",)), {})
    assert refused.status_code == 403
    assert "read" in refused.json()["message"]
    allowed = call("POST", "/end-users/999999/refresh", bearer(compliance, ("read", "prepare")), {})
    assert allowed.status_code == 404


def test_a_token_never_exceeds_its_owner(demo_staff: dict[str, StaffUser]) -> None:
    make_environment()
    maker = demo_staff["finance_maker"]
    response = call("POST", "/payouts/999999/approve", bearer(maker, ALL))
    assert response.status_code == 403


def test_scopes_narrow_has_perm_so_services_and_templates_follow(
    demo_staff: dict[str, StaffUser],
) -> None:
    admin = demo_staff["admin"]
    approver = demo_staff["finance_approver"]

    def token(scope: str) -> Proof:
        scopes = frozenset({scope})
        return Proof(method="token", scopes=scopes, permissions=scope_permissions(scopes))

    proof_attach(admin, token("read"))
    assert not admin.has_perm(ENVIRONMENTS_MANAGE)
    proof_attach(admin, token("admin"))
    assert admin.has_perm(ENVIRONMENTS_MANAGE)
    proof_attach(approver, Proof(method="session"))  # a session: everything the role holds
    assert approver.has_perm(PAYOUT_APPROVE)


def test_an_expired_token_is_401(demo_staff: dict[str, StaffUser]) -> None:
    new = api_token_create(user=demo_staff["compliance"], name="t", days=7)
    headers = {"Authorization": f"Bearer {new.plaintext}"}
    assert call("GET", "/me", headers).status_code == 200
    past = timezone.now() - timedelta(seconds=1)
    ApiToken.objects.filter(pk=new.token.pk).update(expires_at=past)
    response = call("GET", "/me", headers)
    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized"


def test_a_revoked_token_is_401(demo_staff: dict[str, StaffUser]) -> None:
    user = demo_staff["finance_maker"]
    new = api_token_create(user=user, name="t")
    api_token_revoke(token=new.token, by=user)
    assert call("GET", "/me", {"Authorization": f"Bearer {new.plaintext}"}).status_code == 401


def test_a_token_is_useless_once_its_owner_loses_their_role(
    demo_staff: dict[str, StaffUser],
) -> None:
    user = demo_staff["finance_maker"]
    headers = bearer(user, ALL)
    assert call("GET", "/me", headers).status_code == 200
    user.groups.clear()
    assert call("GET", "/me", headers).status_code == 401


def test_privileged_tokens_need_step_up(demo_staff: dict[str, StaffUser]) -> None:
    approver = demo_staff["finance_approver"]
    with pytest.raises(StepUpRequired) as refused:
        api_token_create(user=approver, name="t", scopes=("approve",), by=approver)
    assert refused.value.status == 403 and refused.value.code == "step_up_required"
    assert refused.value.action == "api_token.create_privileged"
    assert not ApiToken.objects.exists()

    new = api_token_create(user=approver, name="t", scopes=("approve",), by=stepped_up(approver))
    assert new.token.stepped_up_at is not None
    entry = AuditEntry.objects.get(action="staff.api_token_created")
    assert entry.details["scopes"] == ["approve"]
    assert entry.details["privileged_by"] == "step_up"
    # Not privileged: no step-up needed, none recorded.
    plain = api_token_create(user=approver, name="t", scopes=("read",), by=approver)
    assert plain.token.stepped_up_at is None


def test_a_privileged_token_stands_for_its_step_up_and_a_plain_one_does_not(
    demo_staff: dict[str, StaffUser],
) -> None:
    approver = demo_staff["finance_approver"]
    privileged = api_token_create(user=approver, name="t", scopes=("approve",))
    plain = api_token_create(user=approver, name="t", scopes=("read",))
    from staff.api_tokens import token_proof

    proof_attach(approver, token_proof(privileged.token))
    assert step_up_fresh(approver)
    proof_attach(approver, token_proof(plain.token))
    assert not step_up_fresh(approver)


def test_lifetime_caps(demo_staff: dict[str, StaffUser], settings: Any) -> None:
    approver = stepped_up(demo_staff["finance_approver"])
    with pytest.raises(ServiceError) as too_long:
        api_token_create(user=approver, name="t", scopes=("approve",), days=91, by=approver)
    assert too_long.value.errors[0].field == "days"
    assert api_token_create(user=approver, name="t", scopes=("approve",), days=90, by=approver)
    assert api_token_create(user=approver, name="t", scopes=("read",), days=365, by=approver)
    with pytest.raises(ServiceError):
        api_token_create(user=approver, name="t", scopes=("read",), days=366, by=approver)
    settings.PAYOPS_API_TOKEN_MAX_DAYS = 30
    with pytest.raises(ServiceError):
        api_token_create(user=approver, name="t", scopes=("read",), days=31, by=approver)
    with pytest.raises(ServiceError) as unknown:
        api_token_create(user=approver, name="t", scopes=("everything",), by=approver)
    assert unknown.value.errors[0].field == "scopes"


def test_the_command_takes_scopes_and_days_and_privileged_only_as_break_glass(
    demo_staff: dict[str, StaffUser],
) -> None:
    out = StringIO()
    args = ["api_token", "create", "--email", "approver@payops.local", "--json"]
    call_command(*args, "--scopes", "read", "--days", "7", stdout=out)
    token = ApiToken.objects.get()
    assert token.scopes == ["read"]
    assert timedelta(days=6) < token.expires_at - timezone.now() <= timedelta(days=7)
    with pytest.raises(CommandError, match="break-glass"):
        call_command(*args, "--scopes", "read,approve", stdout=StringIO())
    with pytest.raises(CommandError, match="90"):
        call_command(*args, "--scopes", "approve", "--days", "120", "--break-glass")
    call_command(*args, "--scopes", "approve", "--days", "90", "--break-glass", stdout=StringIO())
    entry = AuditEntry.objects.filter(action="staff.api_token_created").first()
    assert entry is not None and entry.actor is None
    assert entry.details["privileged_by"] == "operator_command"


def test_me_shows_the_tokens_scopes_and_expiry(demo_staff: dict[str, StaffUser]) -> None:
    new = api_token_create(user=demo_staff["compliance"], name="t", scopes=("read",), days=7)
    body = call("GET", "/me", {"Authorization": f"Bearer {new.plaintext}"}).json()
    assert body["token_scopes"] == ["read"]
    assert body["token_expires_at"].startswith(new.token.expires_at.date().isoformat())


def test_profile_page_creates_with_scopes_and_expiry_and_lists_them(
    demo_staff: dict[str, StaffUser],
) -> None:
    user = demo_staff["finance_approver"]
    browser = client_signed_in(user, second_factor=False)
    page = browser.get("/profile/").content.decode()
    assert 'type="checkbox" name="scopes" value="approve"' in page
    assert 'value="admin"' not in page  # an approver's token could administer nothing
    assert '<option value="30" selected>' in page
    refused = browser.post("/profile/", {"name": "erp", "scopes": ["approve"], "days": "30"})
    assert refused.context["new_token"] is None
    assert "second factor" in refused.content.decode()
    assert 'data-testid="token-step-up"' in refused.content.decode()
    assert not ApiToken.objects.exists()

    browser = client_signed_in(user, second_factor=True)
    created = browser.post("/profile/", {"name": "erp", "scopes": ["approve"], "days": "90"})
    assert created.context["new_token"]
    token = ApiToken.objects.get()
    assert token.scopes == ["approve"] and token.stepped_up_at is not None
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(days=1))
    listed = browser.get("/profile/").content.decode()
    assert "approve" in listed and "Expired" in listed


def test_openapi_json_answers_a_bearer_token(demo_staff: dict[str, StaffUser]) -> None:
    new = api_token_create(user=demo_staff["finance_maker"], name="t", scopes=("read",))
    ok = Client().get("/api/v1/openapi.json", headers={"Authorization": f"Bearer {new.plaintext}"})
    assert ok.status_code == 200 and "/api/v1/me" in ok.json()["paths"]
    for header in ("Bearer payops_nope", "Bearer ", "Basic abc"):
        bad = Client().get("/api/v1/openapi.json", headers={"Authorization": header})
        assert bad.status_code == 401
        assert set(bad.json()) == {"code", "message", "errors"}
        assert bad.json()["code"] == "unauthorized"
    # A browser without a session still goes to the login page.
    assert Client().get("/api/v1/docs").status_code == 302


def test_one_security_scheme_per_way_in(demo_staff: dict[str, StaffUser]) -> None:
    from config.api import api

    schemes = api.get_openapi_schema()["components"]["securitySchemes"]
    assert set(schemes) == {"StaffTokenAuth", "StaffSessionAuth"}
