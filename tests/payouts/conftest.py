"""Payout test fixtures: staff per role (a second approver for the two-approver rule)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from staff.models import StaffUser
from staff.roles import ADMIN, FINANCE_APPROVER, FINANCE_MAKER, roles_sync


def _person(email: str, *roles: str) -> StaffUser:
    user = StaffUser.objects.create_user(email, "pw-not-used-123", full_name=email.split("@")[0])
    user.groups.set(Group.objects.filter(name__in=roles))
    return StaffUser.objects.get(pk=user.pk)  # fresh: no stale permission cache


@pytest.fixture
def staff(db: None) -> dict[str, StaffUser]:
    roles_sync()
    return {
        "maker": _person("maker@pay.test", FINANCE_MAKER.key),
        # Holds both roles: segregation of duties must still refuse them on their own payout.
        "maker_approver": _person("both@pay.test", FINANCE_MAKER.key, FINANCE_APPROVER.key),
        "approver": _person("approver@pay.test", FINANCE_APPROVER.key),
        "approver2": _person("approver2@pay.test", FINANCE_APPROVER.key),
        "admin": _person("admin@pay.test", ADMIN.key),
    }
