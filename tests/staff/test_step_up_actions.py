"""Step-up on role grants (the service and the Django admin) and the middleware that sends a
refused page to the step-up prompt. The payouts, environments and webhooks actions are tested
next to their apps (test_step_up_payouts.py, test_environments_step_up.py, test_step_up.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import Group
from django.contrib.messages import get_messages
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.backends.db import SessionStore
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from staff.changes import changes_apply_due
from staff.errors import ServiceError
from staff.middleware import StepUpMiddleware
from staff.models import AuditEntry, ChangeProposal, StaffUser
from staff.roles import UnknownRole, role_grant, role_revoke
from staff.step_up import Proof, StepUpRequired, proof_attach
from tests.identity import client_signed_in, stepped_up

pytestmark = pytest.mark.django_db


def plain(user: StaffUser) -> StaffUser:
    return StaffUser.objects.get(pk=user.pk)  # no proof attached: no second factor


def groups_of(user: StaffUser) -> set[str]:
    return set(plain(user).groups.values_list("name", flat=True))


# --- role_grant / role_revoke -------------------------------------------------------------------


def test_grant_without_a_second_factor_is_refused_and_changes_nothing(
    demo_staff: dict[str, StaffUser],
) -> None:
    target = demo_staff["finance_maker"]
    with pytest.raises(StepUpRequired) as refused:
        role_grant(user=target, role="finance_approver", by=plain(demo_staff["admin"]))
    assert (refused.value.status, refused.value.code, refused.value.action) == (
        403,
        "step_up_required",
        "role.grant",
    )
    assert groups_of(target) == {"finance_maker"}
    assert not AuditEntry.objects.filter(action__startswith="role.").exists()


def test_a_stale_second_factor_is_refused(demo_staff: dict[str, StaffUser], settings: Any) -> None:
    settings.PAYOPS_STEP_UP_MINUTES = 2
    admin = plain(demo_staff["admin"])
    at = timezone.now() - timedelta(minutes=2, seconds=5)
    proof_attach(admin, Proof(method="session", second_factor_at=at))
    with pytest.raises(StepUpRequired):
        role_grant(user=demo_staff["compliance"], role="admin", by=admin)
    assert groups_of(demo_staff["compliance"]) == {"compliance"}


def test_grant_and_revoke_with_a_fresh_second_factor_are_audited(
    demo_staff: dict[str, StaffUser],
) -> None:
    admin, target = stepped_up(plain(demo_staff["admin"])), demo_staff["finance_maker"]
    assert role_grant(user=target, role="finance_approver", by=admin) is True
    assert groups_of(target) == {"finance_maker", "finance_approver"}
    entry = AuditEntry.objects.get(action="role.granted")
    assert entry.actor_id == admin.pk and entry.target_id == str(target.pk)
    assert entry.details == {
        "role": "finance_approver",
        "before": ["finance_maker"],
        "after": ["finance_approver", "finance_maker"],
    }
    assert role_grant(user=target, role="finance_approver", by=admin) is False  # held already
    assert AuditEntry.objects.filter(action="role.granted").count() == 1
    assert role_revoke(user=target, role="finance_approver", by=admin) is True
    assert groups_of(target) == {"finance_maker"}
    revoked = AuditEntry.objects.get(action="role.revoked")
    assert revoked.details["after"] == ["finance_maker"]


@pytest.mark.parametrize("role", ["finance_maker", "finance_approver", "compliance"])
def test_only_admins_grant_roles_even_with_a_second_factor(
    demo_staff: dict[str, StaffUser], role: str
) -> None:
    person = stepped_up(plain(demo_staff[role]))
    other = next(user for key, user in demo_staff.items() if key not in (role, "admin"))
    with pytest.raises(PermissionDenied):
        role_grant(user=other, role="admin", by=person)
    assert "admin" not in groups_of(other)
    # Without a second factor the refusal is still the permission, not a step-up prompt.
    with pytest.raises(PermissionDenied):
        role_grant(user=other, role="admin", by=plain(person))


def test_nobody_changes_their_own_roles(demo_staff: dict[str, StaffUser]) -> None:
    admin = stepped_up(plain(demo_staff["admin"]))
    with pytest.raises(PermissionDenied):
        role_grant(user=admin, role="finance_approver", by=admin)
    with pytest.raises(PermissionDenied):
        role_revoke(user=admin, role="admin", by=admin)
    assert groups_of(admin) == {"admin"}


def test_a_holder_of_the_admin_role_who_is_not_a_superuser_may_grant(
    demo_staff: dict[str, StaffUser],
) -> None:
    admin = StaffUser.objects.create_user("role-admin@payops.test", "pw-not-used-123")
    admin.groups.add(Group.objects.get(name="admin"))
    role_grant(user=demo_staff["compliance"], role="finance_maker", by=stepped_up(plain(admin)))
    assert groups_of(demo_staff["compliance"]) == {"compliance", "finance_maker"}


def test_an_unknown_role_is_a_400_on_the_role_field(demo_staff: dict[str, StaffUser]) -> None:
    with pytest.raises(UnknownRole) as refused:
        role_grant(
            user=demo_staff["compliance"], role="root", by=stepped_up(plain(demo_staff["admin"]))
        )
    assert isinstance(refused.value, ServiceError) and refused.value.status == 400
    assert refused.value.errors[0].field == "role"


# --- The Django admin ---------------------------------------------------------------------------


def _change_data(user: StaffUser, **overrides: Any) -> dict[str, Any]:
    user = plain(user)
    data: dict[str, Any] = {
        "email": user.email,
        "full_name": user.full_name,
        "groups": [str(pk) for pk in user.groups.values_list("pk", flat=True)],
        "user_permissions": [],
    }
    if user.is_active:
        data["is_active"] = "on"
    if user.is_staff:
        data["is_staff"] = "on"
    if user.is_superuser:
        data["is_superuser"] = "on"
    data.update(overrides)
    return data


def _change_url(user: StaffUser) -> str:
    return reverse("admin:staff_staffuser_change", args=[user.pk])


def test_the_admin_refuses_a_role_change_without_a_fresh_second_factor(
    demo_staff: dict[str, StaffUser],
) -> None:
    target = demo_staff["finance_maker"]
    client = client_signed_in(demo_staff["admin"], second_factor=False)
    approver = str(Group.objects.get(name="finance_approver").pk)
    data = _change_data(target)
    response = client.post(_change_url(target), {**data, "groups": [*data["groups"], approver]})
    assert response.status_code == 200
    html = response.content.decode()
    assert "needs a second factor verified in the last" in html
    assert f"{reverse('staff:step_up')}?next=" in html
    assert groups_of(target) == {"finance_maker"}
    assert not AuditEntry.objects.filter(action__startswith="role.").exists()
    # Making someone a superuser is refused the same way.
    client.post(_change_url(target), {**data, "is_superuser": "on", "is_staff": "on"})
    assert not plain(target).is_superuser


def test_the_admin_saves_other_fields_without_a_second_factor(
    demo_staff: dict[str, StaffUser],
) -> None:
    target = demo_staff["finance_maker"]
    client = client_signed_in(demo_staff["admin"], second_factor=False)
    response = client.post(_change_url(target), _change_data(target, full_name="Renamed"))
    assert response.status_code == 302
    assert plain(target).full_name == "Renamed"
    assert not AuditEntry.objects.filter(action__startswith="role.").exists()


def test_the_admin_changes_roles_with_a_fresh_second_factor_and_audits_them(
    demo_staff: dict[str, StaffUser],
) -> None:
    target = demo_staff["finance_maker"]
    client = client_signed_in(demo_staff["admin"])
    approver = str(Group.objects.get(name="finance_approver").pk)
    response = client.post(
        _change_url(target), _change_data(target, groups=[approver], is_staff="on")
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    # An admin change (staff.changes): proposed, not applied; the demo's only admin waits it out.
    assert groups_of(target) == {"finance_maker"}
    proposal = ChangeProposal.objects.get(kind="staff.access")
    assert proposal.after["groups"] == ["finance_approver"]
    assert proposal.apply_after is not None
    assert changes_apply_due(now=proposal.apply_after) == 1
    assert groups_of(target) == {"finance_approver"}
    entry = AuditEntry.objects.get(action="role.changed_in_admin")
    assert entry.actor_id is None
    assert entry.details["change"]["proposed_by"] == demo_staff["admin"].email
    assert entry.before["groups"] == ["finance_maker"]
    assert entry.after["groups"] == ["finance_approver"]
    assert (entry.before["is_staff"], entry.after["is_staff"]) == (
        False,
        True,
    )


def test_a_roles_group_permissions_change_in_the_admin_needs_a_fresh_second_factor(
    demo_staff: dict[str, StaffUser],
) -> None:
    from django.contrib.auth.models import Permission

    group = Group.objects.get(name="finance_maker")
    url = reverse("admin:auth_group_change", args=[group.pk])
    declared = [str(pk) for pk in group.permissions.values_list("pk", flat=True)]
    extra = str(Permission.objects.get(codename="approve_payout").pk)
    data = {"name": group.name, "permissions": [*declared, extra]}
    stale = client_signed_in(demo_staff["admin"], second_factor=False)
    response = stale.post(url, data)
    assert response.status_code == 200
    assert "needs a second factor verified in the last" in response.content.decode()
    assert not group.permissions.filter(codename="approve_payout").exists()
    fresh = client_signed_in(demo_staff["admin"])
    assert fresh.post(url, data).status_code == 302
    # An admin change (staff.changes): proposed; the demo's only admin waits it out.
    assert not group.permissions.filter(codename="approve_payout").exists()
    proposal = ChangeProposal.objects.get(kind="staff.group")
    assert "staff.approve_payout" in proposal.after["permissions"]
    assert changes_apply_due(now=proposal.apply_after) == 1
    assert group.permissions.filter(codename="approve_payout").exists()
    entry = AuditEntry.objects.get(action="role.group_changed_in_admin")
    assert "staff.approve_payout" in entry.details["after"]["permissions"]
    assert "staff.approve_payout" not in entry.details["before"]["permissions"]


# --- The middleware -----------------------------------------------------------------------------


def _request(method: str, path: str, **headers: str) -> HttpRequest:
    request = getattr(RequestFactory(), method)(path, headers=headers)
    request.session = SessionStore()
    request._messages = FallbackStorage(request)  # type: ignore[attr-defined]
    return request


def _middleware() -> StepUpMiddleware:
    return StepUpMiddleware(lambda request: HttpResponse())


def _next_of(location: str) -> str:
    parts = urlsplit(location)
    assert parts.path == reverse("staff:step_up")
    return parse_qs(parts.query)["next"][0]


def test_a_refused_get_comes_back_to_itself_with_its_query() -> None:
    request = _request("get", "/payouts/approval-policy/?x=1")
    response = _middleware().process_exception(request, StepUpRequired("approval_policy.publish"))
    assert response is not None and response.status_code == 302
    assert _next_of(response["Location"]) == "/payouts/approval-policy/?x=1"
    assert [m.level_tag for m in get_messages(request)] == ["warning"]


def test_a_refused_post_without_a_referer_comes_back_to_its_path() -> None:
    request = _request("post", "/webhooks/1/rotate/")
    response = _middleware().process_exception(request, StepUpRequired("webhook.secret"))
    assert response is not None and _next_of(response["Location"]) == "/webhooks/1/rotate/"


def test_the_api_and_other_errors_are_left_alone() -> None:
    api = _request("post", "/api/v1/payouts/1/approve")
    assert _middleware().process_exception(api, StepUpRequired("payout.approve")) is None
    page = _request("post", "/payouts/1/approve/")
    assert _middleware().process_exception(page, ServiceError("other")) is None


def test_in_the_admin_a_second_admin_approves_a_proposed_role_change_and_names_stay_saved(
    demo_staff: dict[str, StaffUser],
) -> None:
    target = demo_staff["finance_maker"]
    second = StaffUser.objects.create_user("admin-second@example.test", "pw-second-admin-1")
    second.groups.add(Group.objects.get(name="admin"))
    approver = str(Group.objects.get(name="finance_approver").pk)
    client = client_signed_in(demo_staff["admin"])

    renamed = client.post(_change_url(target), _change_data(target, full_name="Renamed Maker"))
    assert renamed.status_code == 302
    assert StaffUser.objects.get(pk=target.pk).full_name == "Renamed Maker"  # not an access field
    assert not ChangeProposal.objects.exists()

    client.post(_change_url(target), _change_data(target, groups=[approver]))
    proposal = ChangeProposal.objects.get(kind="staff.access")
    assert proposal.apply_after is None  # another admin exists
    assert groups_of(target) == {"finance_maker"}

    approved = client_signed_in(second).post(f"/changes/{proposal.pk}/approve/")
    assert approved.status_code == 302
    assert groups_of(target) == {"finance_approver"}
    entry = AuditEntry.objects.get(action="role.changed_in_admin")
    assert entry.actor == second
    assert entry.details["change"]["proposed_by"] == demo_staff["admin"].email
