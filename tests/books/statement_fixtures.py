"""A virtual account's October 2026, built from records (no upstream): an opening deposit in
September, deposits, a completed payout priced on a quote, a payout returned, a payout failed, an
explained adjustment, a payout without a quote or a fee breakdown, a payout in November.

Expected (October): opening 500.00, deposits 1,025.00, payouts 650.04, fees 14.50, returns
256.04, adjustments -1.25, closing 1,115.25."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from accounts.models import Deposit, VirtualAccount
from books.models import BalanceAdjustment
from gateway.models import Environment
from payouts.models import Approval, Payout, PayoutStatus, PayoutStatusChange
from quotes.models import Quote
from staff.models import StaffUser
from tests.finance import make_draft, make_recipient, make_staff, make_virtual_account


def at(month: int, day: int, hour: int = 12, minute: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


@dataclass
class October:
    environment: Environment
    account: VirtualAccount
    maker: StaffUser
    approver: StaffUser
    completed: Payout  # po-1: on a quote, itemised fees
    returned: Payout  # po-2
    failed: Payout  # po-3
    plain: Payout  # po-4: no quote, only total_fees


def _deposit(va: VirtualAccount, ref: str, amount: str, when: datetime, sender: str = "") -> None:
    Deposit.objects.create(
        virtual_account=va,
        deposit_id=ref,
        amount=Decimal(amount),
        currency="USD",
        received_at=when,
        sender_name=sender,
    )


def _moves(payout: Payout, *moves: tuple[str, datetime]) -> None:
    previous = ""
    for to, when in moves:
        PayoutStatusChange.objects.create(
            payout=payout, from_status=previous, to_status=to, source="event", at=when
        )
        previous = to


def build_october(environment: Environment) -> October:
    maker = make_staff("finance_maker")
    approver = make_staff("finance_approver")
    va = make_virtual_account(
        environment, account_number="9876543216789", routing_number="021000021"
    )
    _deposit(va, "dep-0", "500.00", at(9, 20))
    _deposit(va, "dep-1", "1000.00", at(10, 1), sender="Acme Corp")
    quote = Quote.objects.create(
        environment=environment,
        upstream_id="qt-1",
        requested_by=maker,
        base_currency="USD",
        quote_currency="MXN",
        account_type="WIRE",
        requested_amount=Decimal("100.00"),
        base_amount=Decimal("100.00"),
        quote_amount=Decimal("1984.00"),
        rate=Decimal("20.000000"),
        service_rate=Decimal("19.840000"),
        status="USED",
        expires_at=at(10, 2),
    )
    completed = make_draft(
        maker=maker,
        environment=environment,
        virtual_account=va,
        amount="100.00",
        upstream_id="po-1",
        status=PayoutStatus.COMPLETED,
        quote=quote,
        reference="INV-1",
        charged_amount=Decimal("100.00"),
        charged_fees={
            "base_fees": {"fixed_fee": "1.00", "percentage_fee": "0.02", "fx_markup": "0.005"},
            "client_markup": {"fixed_fee": "0.50", "fx_markup": "0.001"},
            "penalty_markup": "0.002",
            "total_fees": "3.50",
        },
        charged_total_fees=Decimal("3.50"),
        charged_total=Decimal("103.50"),
        charged_recipient_amount=Decimal("1984.00"),
        charged_recipient_currency="MXN",
        charged_at=at(10, 2),
        upstream_payload={"id": "po-1", "uetr": "9f2c1c3e-4b1a-4d7e-8a55-0c1d2e3f4a5b"},
    )
    _moves(completed, (PayoutStatus.CREATED, at(10, 2)), (PayoutStatus.COMPLETED, at(10, 2, 15)))
    Approval.objects.create(payout=completed, approver=approver, round=1, step=0)
    returned = make_draft(
        maker=maker,
        environment=environment,
        virtual_account=va,
        recipient=completed.recipient,
        amount="200.04",
        upstream_id="po-2",
        status=PayoutStatus.RETURNED,
        charged_amount=Decimal("200.04"),
        charged_total_fees=Decimal("4.00"),
        charged_total=Decimal("204.04"),
        charged_recipient_amount=Decimal("3968.79"),
        charged_recipient_currency="MXN",
        charged_at=at(10, 3),
    )
    _moves(returned, (PayoutStatus.COMPLETED, at(10, 4)), (PayoutStatus.RETURNED, at(10, 5)))
    failed = make_draft(
        maker=maker,
        environment=environment,
        virtual_account=va,
        recipient=completed.recipient,
        amount="50.00",
        upstream_id="po-3",
        status=PayoutStatus.FAILED,
        charged_amount=Decimal("50.00"),
        charged_total_fees=Decimal("2.00"),
        charged_total=Decimal("52.00"),
        charged_at=at(10, 6, 10),
    )
    _moves(failed, (PayoutStatus.FAILED, at(10, 6, 11)))
    BalanceAdjustment.objects.create(
        virtual_account=va,
        amount=Decimal("-1.25"),
        currency="USD",
        at=at(10, 7),
        kind="upstream",
        reason="Wire fee charged by the bank",
        recorded_by=maker,
    )
    _deposit(va, "dep-2", "25.00", at(10, 8), sender='=HYPERLINK("http://evil.test","x")')
    spei = make_recipient(
        environment,
        va.end_user,
        created_by=maker,
        country="MX",
        account_type="SWIFT",
        swift_code="BCMRMXMMPYM",
        bank_name="BBVA Mexico",
        account_number="012180001234567891",
        first_name="Luis",
        last_name="Ortega",
    )
    plain = make_draft(
        maker=maker,
        environment=environment,
        virtual_account=va,
        recipient=spei,
        amount="300.00",
        upstream_id="po-4",
        status=PayoutStatus.COMPLETED,
        charged_amount=Decimal("300.00"),
        charged_fees={"total_fees": "5.00"},
        charged_total_fees=Decimal("5.00"),
        charged_total=Decimal("305.00"),
        charged_recipient_amount=Decimal("5400.00"),
        charged_recipient_currency="MXN",
        charged_at=at(10, 9),
    )
    _moves(plain, (PayoutStatus.COMPLETED, at(10, 9, 13)))
    # After the period: not in October's statement.
    make_draft(
        maker=maker,
        environment=environment,
        virtual_account=va,
        recipient=completed.recipient,
        amount="10.00",
        upstream_id="po-5",
        status=PayoutStatus.PROCESSING,
        charged_amount=Decimal("10.00"),
        charged_total_fees=Decimal("1.00"),
        charged_total=Decimal("11.00"),
        charged_at=at(11, 3),
    )
    return October(environment, va, maker, approver, completed, returned, failed, plain)
