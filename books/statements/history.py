"""A virtual account's balance history: the ledger's balance at the end of each day, and the
upstream's balance readings beside the ledger's balance at the same instant.

Days are whole UTC days as in a statement (`statement.day_start`, `statement.day_end`); every
function here costs a constant number of queries, whatever the number of days or movements.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from accounts.models import BalanceSnapshot, VirtualAccount
from books.ledger import movements, roll_forward
from books.statements.statement import day_end, day_start
from staff import roles
from staff.models import StaffUser
from users.mirror import require


@dataclass(frozen=True)
class Reading:
    """One reading of the upstream's balance beside the ledger's balance at the same instant."""

    as_of: datetime
    read_at: datetime
    balance: Decimal
    ledger: Decimal

    @property
    def difference(self) -> Decimal:
        return self.ledger - self.balance


@dataclass(frozen=True)
class Day:
    day: date
    balance: Decimal  # the ledger's balance at the end of the day
    readings: tuple[Reading, ...] = ()


def balance_on(*, virtual_account: VirtualAccount, day: date, by: StaffUser | None) -> Decimal:
    """The ledger's balance at the end of `day` (UTC)."""
    require(by, roles.BOOKS_VIEW)
    return roll_forward(virtual_account, start=None, end=day_end(day)).closing


def balance_history(
    *, virtual_account: VirtualAccount, start: date, end: date, by: StaffUser | None
) -> list[Day]:
    """The balance at the end of each day start..end, and the upstream's readings taken on each
    day beside the ledger's balance at each reading's `as_of` (one roll-forward, one ordered pass
    over the movements, one query for the readings: never a query per day)."""
    require(by, roles.BOOKS_VIEW)
    va = virtual_account
    lo, hi = day_start(start), day_end(end)
    balance = roll_forward(va, start=None, end=lo).closing
    readings = list(
        BalanceSnapshot.objects.filter(virtual_account=va, as_of__gt=lo, as_of__lte=hi).order_by(
            "as_of", "pk"
        )
    )
    pending = iter(readings)
    reading = next(pending, None)
    per_day: dict[date, list[Reading]] = {}
    closing: dict[date, Decimal] = {}

    def take_readings(until: datetime | None) -> None:
        nonlocal reading
        while reading is not None and (until is None or reading.as_of < until):
            per_day.setdefault(reading.as_of.astimezone(UTC).date(), []).append(
                Reading(reading.as_of, reading.read_at, reading.balance, balance)
            )
            reading = next(pending, None)

    opening = balance
    for movement in movements(va, start=lo, end=hi):
        take_readings(movement.at)
        balance += movement.amount
        closing[movement.at.astimezone(UTC).date()] = balance
    take_readings(None)
    days = []
    last = opening
    current = start
    while current <= end:
        last = closing.get(current, last)
        days.append(Day(current, last, tuple(per_day.get(current, ()))))
        current += timedelta(days=1)
    return days
