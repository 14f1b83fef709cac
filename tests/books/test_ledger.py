"""The ledger: deposits, payouts with fees, reversals once, adjustments; roll-forward by period."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from accounts.models import Deposit
from books.ledger import MovementKind, balance_as_of, movements, roll_forward
from books.models import BalanceAdjustment
from payouts.models import PayoutStatus, PayoutStatusChange
from tests.finance import make_draft, make_environment, make_staff, make_virtual_account

pytestmark = pytest.mark.django_db


def _t(days: float) -> datetime:
    return datetime(2026, 10, 1, 12, 0, tzinfo=timezone.get_current_timezone()) + timedelta(
        days=days
    )


@pytest.fixture
def book():  # type: ignore[no-untyped-def]
    maker = make_staff("finance_maker")
    environment = make_environment()
    va = make_virtual_account(environment)
    Deposit.objects.create(
        virtual_account=va,
        deposit_id="dep-1",
        amount=Decimal("1000.00"),
        currency="USD",
        received_at=_t(0),
    )
    paid = make_draft(
        maker=maker,
        environment=environment,
        virtual_account=va,
        amount="100.00",
        upstream_id="po-1",
        status=PayoutStatus.COMPLETED,
        charged_amount=Decimal("100.00"),
        charged_total_fees=Decimal("3.50"),
        charged_total=Decimal("103.50"),
        charged_at=_t(1),
    )
    returned = make_draft(
        maker=maker,
        environment=environment,
        virtual_account=va,
        amount="200.04",
        upstream_id="po-2",
        status=PayoutStatus.RETURNED,
        charged_amount=Decimal("200.04"),
        charged_total_fees=Decimal("4.00"),
        charged_total=Decimal("204.04"),
        charged_at=_t(2),
        recipient=paid.recipient,
    )
    for to, days in ((PayoutStatus.COMPLETED, 3), (PayoutStatus.RETURNED, 4)):
        PayoutStatusChange.objects.create(
            payout=returned, from_status="", to_status=to, source="event", at=_t(days)
        )
    # Never accepted upstream: not in the books.
    make_draft(
        maker=maker,
        environment=environment,
        virtual_account=va,
        amount="50.00",
        recipient=paid.recipient,
    )
    BalanceAdjustment.objects.create(
        virtual_account=va,
        amount=Decimal("-1.25"),
        currency="USD",
        at=_t(5),
        kind="upstream",
        reason="Wire fee charged by the bank",
        recorded_by=maker,
    )
    return va


def test_movements_in_time_order_with_signs(book) -> None:  # type: ignore[no-untyped-def]
    found = [(m.kind, m.amount, m.fees) for m in movements(book)]
    assert found == [
        (MovementKind.DEPOSIT, Decimal("1000.00"), Decimal("0.00")),
        (MovementKind.PAYOUT, Decimal("-103.50"), Decimal("3.50")),
        (MovementKind.PAYOUT, Decimal("-204.04"), Decimal("4.00")),
        (MovementKind.REVERSAL, Decimal("204.04"), Decimal("4.00")),
        (MovementKind.ADJUSTMENT, Decimal("-1.25"), Decimal("0.00")),
    ]


def test_roll_forward_by_period_chains(book) -> None:  # type: ignore[no-untyped-def]
    first = roll_forward(book, start=None, end=_t(1.5))
    second = roll_forward(book, start=_t(1.5), end=_t(10))
    assert (first.opening, first.closing) == (Decimal("0.00"), Decimal("896.50"))
    assert second.opening == first.closing
    assert (second.payouts, second.fees, second.reversals) == (
        Decimal("200.04"),
        Decimal("4.00"),
        Decimal("204.04"),
    )
    assert second.adjustments == Decimal("-1.25")
    assert second.closing == Decimal("895.25")
    assert balance_as_of(book, _t(3.5)) == Decimal("692.46")
    assert balance_as_of(book, _t(4.5)) == Decimal("896.50")


def test_constant_queries(book, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    with django_assert_max_num_queries(4):
        list(movements(book))
