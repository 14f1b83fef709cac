"""Payout test fixtures: a maker and a draft of theirs (offline: no upstream needed)."""

from __future__ import annotations

import pytest

from payouts.models import Payout
from staff.models import StaffUser
from tests.finance import make_draft, make_staff


@pytest.fixture
def maker(db: None) -> StaffUser:
    return make_staff("finance_maker")


@pytest.fixture
def draft_payout(maker: StaffUser) -> Payout:
    return make_draft(maker=maker)
