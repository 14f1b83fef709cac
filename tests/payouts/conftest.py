"""Payout test fixtures: a maker and a draft of theirs, and staff for the maker-checker rules."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from payouts.models import Payout
from staff.models import StaffUser
from staff.roles import ADMIN, FINANCE_APPROVER, FINANCE_MAKER, roles_sync
from tests.finance import make_draft, make_staff
from tests.identity import stepped_up
from tests.payouts.live import World, build_world


@pytest.fixture
def maker(db: None) -> StaffUser:
    return make_staff("finance_maker")


@pytest.fixture
def draft_payout(maker: StaffUser) -> Payout:
    return make_draft(maker=maker)


def _person(email: str, *roles: str) -> StaffUser:
    """A person acting as right after their sign-in's second factor: these fixtures test the
    maker-checker rules, not step-up (tests/staff/test_step_up_actions.py does)."""
    user = StaffUser.objects.create_user(email, "pw-not-used-123", full_name=email.split("@")[0])
    user.groups.set(Group.objects.filter(name__in=roles))
    return stepped_up(StaffUser.objects.get(pk=user.pk))  # fresh: no stale permission cache


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


# The live emulator over HTTP (uvicorn on a free port) and a sandbox environment pointing at it.
from tests.gateway.conftest import _fresh_shared_state, live_emulator, sandbox  # noqa: E402, F401


@pytest.fixture
def q_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    """django-q2 runs queued tasks inline at once (on commit), as a worker would, in-process."""
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


@pytest.fixture
def world(
    transactional_db: None,
    request: pytest.FixtureRequest,
    staff: dict[str, StaffUser],
    q_sync: None,
) -> World:
    # transactional_db first: the emulator serves from another thread and must see our rows.
    emulator = request.getfixturevalue("live_emulator")
    environment = request.getfixturevalue("sandbox")
    # The recipient is created by the maker (not an approver), unless a test says otherwise.
    return build_world(emulator, environment, recipient_creator=staff["maker"])
