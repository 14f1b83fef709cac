"""Every access change made through the Django admin is in the audit trail with its before and
after (issue 20 item 4): role and permission changes (tests/staff/test_step_up_actions.py),
activation and deactivation, and adding or deleting a staff user or a role's group."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from console.audit.diff import before_after, changed_keys
from staff.audit_chain import chain_verify
from staff.changes import changes_apply_due
from staff.models import AuditEntry, ChangeProposal, StaffUser
from tests.identity import client_signed_in
from tests.staff.test_step_up_actions import _change_data, _change_url

pytestmark = pytest.mark.django_db


def test_deactivating_someone_needs_step_up_and_is_audited_with_before_and_after(
    demo_staff: dict[str, StaffUser],
) -> None:
    target = demo_staff["finance_approver"]
    data = _change_data(target)
    data.pop("is_active")  # the checkbox unticked
    stale = client_signed_in(demo_staff["admin"], second_factor=False)
    assert stale.post(_change_url(target), data).status_code == 200  # refused on the form
    target.refresh_from_db()
    assert target.is_active
    fresh = client_signed_in(demo_staff["admin"])
    assert fresh.post(_change_url(target), data).status_code == 302
    # An admin change (staff.changes): proposed, applied when the demo's only admin's wait ends.
    target.refresh_from_db()
    assert target.is_active
    proposal = ChangeProposal.objects.get(kind="staff.access")
    assert (proposal.before["is_active"], proposal.after["is_active"]) == (True, False)
    assert changes_apply_due(now=proposal.apply_after) == 1
    target.refresh_from_db()
    assert not target.is_active
    entry = AuditEntry.objects.get(action="role.changed_in_admin", target_id=str(target.pk))
    assert entry.details["change"]["proposed_by"] == demo_staff["admin"].email
    assert (entry.before["is_active"], entry.after["is_active"]) == (True, False)
    assert changed_keys(*before_after(entry)) == ["is_active"]
    assert chain_verify().ok


def test_adding_a_staff_user_in_the_admin_is_audited(demo_staff: dict[str, StaffUser]) -> None:
    client = client_signed_in(demo_staff["admin"])
    response = client.post(
        reverse("admin:staff_staffuser_add"),
        {"email": "new@payops.local", "usable_password": "false"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    user = StaffUser.objects.get(email="new@payops.local")
    entry = AuditEntry.objects.get(action="staff.created_in_admin")
    assert entry.target_id == str(user.pk) and entry.actor_id == demo_staff["admin"].pk
    assert entry.before == {} and entry.after["groups"] == []


def test_adding_and_deleting_a_group_in_the_admin_is_audited(
    demo_staff: dict[str, StaffUser],
) -> None:
    client = client_signed_in(demo_staff["admin"])
    permission = Permission.objects.get(codename="approve_payout")
    response = client.post(
        reverse("admin:auth_group_add"), {"name": "night_shift", "permissions": [permission.pk]}
    )
    assert response.status_code == 302
    group = Group.objects.get(name="night_shift")
    created = AuditEntry.objects.get(action="role.group.created_in_admin")
    assert created.after == {"name": "night_shift", "permissions": ["staff.approve_payout"]}
    url = reverse("admin:auth_group_delete", args=[group.pk])
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert not Group.objects.filter(name="night_shift").exists()
    deleted = AuditEntry.objects.get(action="role.group.deleted_in_admin")
    assert deleted.target_id == str(group.pk)
    assert deleted.before["permissions"] == ["staff.approve_payout"] and deleted.after == {}


def test_a_bulk_delete_of_groups_audits_each(demo_staff: dict[str, StaffUser]) -> None:
    groups = [Group.objects.create(name=f"temp_{i}") for i in range(2)]
    client = client_signed_in(demo_staff["admin"])
    data: dict[str, Any] = {
        "action": "delete_selected",
        "_selected_action": [str(g.pk) for g in groups],
        "post": "yes",
    }
    assert client.post(reverse("admin:auth_group_changelist"), data).status_code == 302
    deleted = AuditEntry.objects.filter(action="role.group.deleted_in_admin")
    assert {e.target_id for e in deleted} == {str(g.pk) for g in groups}


def test_any_django_admin_change_is_audited_a_task_schedule_included(
    demo_staff: dict[str, StaffUser],
) -> None:
    """A model no service of ours owns (django-q2's schedules: deleting one stops a job)."""
    from django_q.models import Schedule

    schedule = Schedule.objects.create(name="nightly", func="math.floor", minutes=1)
    client = client_signed_in(demo_staff["admin"])
    url = reverse("admin:django_q_schedule_delete", args=[schedule.pk])
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert not Schedule.objects.filter(pk=schedule.pk).exists()
    entry = AuditEntry.objects.get(action="admin.deleted")
    assert entry.actor_id == demo_staff["admin"].pk
    assert (entry.target_type, entry.target_id) == ("django_q.schedule", str(schedule.pk))
    assert entry.details["model"] == "django_q.schedule"
    assert chain_verify().ok


def test_a_django_admin_change_keeps_the_forms_account_of_it(
    demo_staff: dict[str, StaffUser],
) -> None:
    target = demo_staff["finance_maker"]
    client = client_signed_in(demo_staff["admin"])
    response = client.post(_change_url(target), _change_data(target, full_name="Renamed Maker"))
    assert response.status_code == 302
    entry = AuditEntry.objects.get(action="admin.changed", target_id=str(target.pk))
    assert "Full name" in entry.details["change"] or "full_name" in entry.details["change"]
