"""Roles are groups holding exactly their declared permissions, synced idempotently."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from staff.models import StaffUser
from staff.roles import (
    ADMIN,
    COMPLIANCE,
    FINANCE_APPROVER,
    FINANCE_MAKER,
    ROLES,
    has_staff_role,
    roles_sync,
    user_roles,
)

pytestmark = pytest.mark.django_db


def group_permissions(name: str) -> set[str]:
    group = Group.objects.get(name=name)
    return {
        f"{p.content_type.app_label}.{p.codename}"
        for p in group.permissions.select_related("content_type")
    }


def test_each_role_group_holds_exactly_its_declared_permissions() -> None:
    roles_sync()
    for role in ROLES:
        assert group_permissions(role.key) == set(role.permissions)


def test_roles_sync_is_idempotent() -> None:
    roles_sync()
    first = {role.key: group_permissions(role.key) for role in ROLES}
    group_ids = set(Group.objects.values_list("id", flat=True))
    roles_sync()
    assert set(Group.objects.values_list("id", flat=True)) == group_ids
    assert {role.key: group_permissions(role.key) for role in ROLES} == first


def test_roles_sync_removes_a_permission_added_by_hand() -> None:
    roles_sync()
    maker = Group.objects.get(name=FINANCE_MAKER.key)
    maker.permissions.add(Permission.objects.get(codename="approve_payout"))
    roles_sync()
    assert "staff.approve_payout" not in group_permissions(FINANCE_MAKER.key)


def test_roles_exist_after_migrate_without_bootstrap() -> None:
    # post_migrate runs roles_sync, so a fresh test database already holds the groups.
    assert set(Group.objects.values_list("name", flat=True)) >= {role.key for role in ROLES}


def test_maker_and_approver_are_separate_duties() -> None:
    assert "staff.initiate_payout" in FINANCE_MAKER.permissions
    assert "staff.approve_payout" not in FINANCE_MAKER.permissions
    assert "staff.approve_payout" in FINANCE_APPROVER.permissions
    assert "staff.initiate_payout" not in FINANCE_APPROVER.permissions


def test_permissions_follow_group_membership() -> None:
    roles_sync()
    user = StaffUser.objects.create_user("someone@example.com", "x")
    assert not user.has_perm("staff.view_compliance")
    assert not has_staff_role(user)
    user.groups.add(Group.objects.get(name=COMPLIANCE.key))
    user = StaffUser.objects.get(pk=user.pk)  # fresh permission cache
    assert user.has_perm("staff.view_compliance")
    assert not user.has_perm("staff.view_finance")
    assert user_roles(user) == [COMPLIANCE]
    assert has_staff_role(user)


def test_display_names_are_human() -> None:
    assert [role.display_name for role in ROLES] == [
        "Finance maker",
        "Finance approver",
        "Compliance",
        "Admin",
        "Auditor",
    ]
    assert ADMIN.key == "admin"
