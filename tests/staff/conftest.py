"""Fixtures for staff tests: roles synced, demo staff seeded, a signed-in client per role."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from staff.bootstrap import seed_demo_staff
from staff.models import StaffUser
from staff.roles import ADMIN, COMPLIANCE, FINANCE_APPROVER, FINANCE_MAKER, roles_sync


@pytest.fixture
def demo_staff(db: None) -> dict[str, StaffUser]:
    """One demo user per role, keyed by role key, made the way payops_bootstrap makes them."""
    roles_sync()
    return {user.groups.get().name: user for user in seed_demo_staff()}


@pytest.fixture
def client_for(demo_staff: dict[str, StaffUser]) -> Callable[[str], Client]:
    def make(role_key: str) -> Client:
        client = Client()
        client.force_login(demo_staff[role_key])
        return client

    return make


ROLE_KEYS = [FINANCE_MAKER.key, FINANCE_APPROVER.key, COMPLIANCE.key, ADMIN.key]
