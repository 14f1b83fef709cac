"""Personal API tokens: shown once, stored hashed, revocable, last use kept, acting as the owner."""

from __future__ import annotations

import hashlib
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from staff.api_tokens import api_token_create, api_token_revoke
from staff.models import ApiToken, AuditEntry, StaffUser
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db


def test_command_prints_exactly_one_json_object_with_a_working_token(
    staff: dict[str, StaffUser],
) -> None:
    out = StringIO()
    call_command("api_token", "create", "--email", "COMPLIANCE@payops.local", "--json", stdout=out)
    body = json.loads(out.getvalue())
    assert list(body) == ["token"]
    me = Client().get("/api/v1/me", headers={"Authorization": f"Bearer {body['token']}"})
    assert me.status_code == 200
    assert me.json()["email"] == "compliance@payops.local"
    assert me.json()["roles"] == ["compliance"]


def test_only_a_hash_of_the_token_is_stored(staff: dict[str, StaffUser]) -> None:
    new = api_token_create(user=staff["finance_maker"], name="erp")
    row = ApiToken.objects.get(pk=new.token.pk)
    assert new.plaintext not in json.dumps(
        {f.name: str(getattr(row, f.name)) for f in ApiToken._meta.fields}
    )
    assert row.token_hash == hashlib.sha256(new.plaintext.encode()).hexdigest()


def test_a_revoked_or_unknown_token_is_refused_in_the_one_error_shape(
    staff: dict[str, StaffUser],
) -> None:
    new = api_token_create(user=staff["finance_maker"], name="erp")
    api_token_revoke(token=new.token, by=staff["finance_maker"])
    for token in (new.plaintext, "payops_not-a-token", "garbage"):
        response = Client().get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 401
        assert set(response.json()) == {"code", "message", "errors"}
        assert response.json()["code"] == "unauthorized"
    assert AuditEntry.objects.filter(action="staff.api_token_revoked").count() == 1


def test_use_records_the_last_used_time(staff: dict[str, StaffUser]) -> None:
    new = api_token_create(user=staff["finance_approver"], name="erp")
    assert new.token.last_used_at is None
    Client().get("/api/v1/me", headers={"Authorization": f"Bearer {new.plaintext}"})
    new.token.refresh_from_db()
    assert new.token.last_used_at is not None


def test_a_token_stops_working_when_its_owner_is_deactivated(staff: dict[str, StaffUser]) -> None:
    user = staff["finance_maker"]
    new = api_token_create(user=user, name="erp")
    user.is_active = False
    user.save()
    response = Client().get("/api/v1/me", headers={"Authorization": f"Bearer {new.plaintext}"})
    assert response.status_code == 401


def test_profile_page_shows_a_new_token_once_and_can_revoke_it(
    staff: dict[str, StaffUser],
) -> None:
    browser = client_signed_in(staff["compliance"])
    created = browser.post(
        "/profile/", {"name": "my script", "scopes": ["read", "prepare"], "days": "30"}
    )
    token = created.context["new_token"]
    assert token and token in created.content.decode()
    again = browser.get("/profile/")
    assert token not in again.content.decode()
    assert "my script" in again.content.decode()
    row = ApiToken.objects.get(user=staff["compliance"])
    browser.post(f"/profile/tokens/{row.pk}/revoke/")
    row.refresh_from_db()
    assert row.revoked_at is not None


def test_nobody_revokes_someone_elses_token(staff: dict[str, StaffUser]) -> None:
    mine = api_token_create(user=staff["compliance"], name="mine")
    browser = Client()
    browser.force_login(staff["finance_maker"])
    assert browser.post(f"/profile/tokens/{mine.token.pk}/revoke/").status_code == 404
    mine.token.refresh_from_db()
    assert mine.token.revoked_at is None
