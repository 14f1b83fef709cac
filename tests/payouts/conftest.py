"""Payout test fixtures: a maker and a draft of theirs, and staff for the maker-checker rules."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from payouts.models import Payout
from staff.models import StaffUser
from staff.roles import ADMIN, FINANCE_APPROVER, FINANCE_MAKER, roles_sync
from tests.finance import make_draft, make_staff


@pytest.fixture
def maker(db: None) -> StaffUser:
    return make_staff("finance_maker")


@pytest.fixture
def draft_payout(maker: StaffUser) -> Payout:
    return make_draft(maker=maker)


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
