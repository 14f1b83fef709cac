"""Quote test fixtures: the real emulator over HTTP (gateway fixtures) and staff by role."""

from __future__ import annotations

import pytest

from gateway.models import Environment
from staff.models import StaffUser
from tests.finance import make_staff
from tests.gateway.conftest import _fresh_shared_state, live_emulator, sandbox

__all__ = ["_fresh_shared_state", "live_emulator", "sandbox"]


@pytest.fixture
def maker(db: None) -> StaffUser:
    return make_staff("finance_maker")


@pytest.fixture
def working_in(sandbox: Environment, maker: StaffUser) -> Environment:
    """The maker works in the emulator's sandbox (their chosen environment)."""
    from gateway.services.environments import environment_switch

    environment_switch(user=maker, environment=sandbox)
    return sandbox
