"""
PayOps's ledger of a virtual account: every movement of its balance that PayOps knows of.

The upstream keeps no statement (decisions.md 2 only has the balance now), so the ledger is built
from our own records, each a movement of the upstream's `available_balance`:

- deposit (`accounts.Deposit`): + amount, at `received_at`;
- payout (a fiat `Payout` the upstream accepted, with its charged figures): - amount - fees, at
  `upstream_created_at` (when the upstream made it and debited the account), else `charged_at`
  (when its initiation's answer came: the 201 carries no time);
- reversal (that payout failing, returned or cancelled afterwards: the upstream gives back the
  whole debit, fees included, decisions.md 3): + amount + fees, at the status change's
  `upstream_at` (when the upstream made the move), else its `at` (when PayOps learned it);
- adjustment (`books.BalanceAdjustment`, explained by a person): signed, at `at`.

Every entry is dated when the upstream made it, where it says, so that a balance reading (whose
`as_of` is the upstream's time of the balance's last change) meets the ledger at the same
instant: a return learned days later, or a payout in flight when the balance was read, leaves no
lasting gap (docs/books.md, "Dating the ledger").

Crypto payouts never touch the balance (a stablecoin deposit funds each one), so they are not in
it. An account opens with a zero balance upstream, so the balance as of `t` is the sum of every
movement up to `t`; the upstream's own readings (`accounts.BalanceSnapshot`) are the evidence the
ledger is checked against, never an input to it.

Every function here costs a constant number of queries, whatever the number of movements.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from django.db.models import DecimalField, F, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce

from accounts.models import Deposit, VirtualAccount
from books.models import BalanceAdjustment
from payouts.models import Payout, PayoutMode, PayoutStatus, PayoutStatusChange

CENTS = Decimal("0.01")
ZERO = Decimal("0.00")
# A payout's debit given back by the upstream (decisions.md 3: FAILED, CANCELLED; a return is a
# FAILED after COMPLETED, which PayOps names RETURNED).
REVERSING = (PayoutStatus.FAILED, PayoutStatus.RETURNED, PayoutStatus.CANCELLED)
_MONEY = DecimalField(max_digits=18, decimal_places=2)


class MovementKind(StrEnum):
    DEPOSIT = "deposit"
    PAYOUT = "payout"
    REVERSAL = "reversal"
    ADJUSTMENT = "adjustment"


@dataclass(frozen=True)
class Movement:
    """One movement of a balance. `amount` is signed and includes `fees` (payouts, reversals)."""

    at: datetime
    kind: MovementKind
    amount: Decimal
    fees: Decimal
    currency: str
    # The upstream's id of what moved the balance (deposit_id, payout id) or ours (adjustment).
    reference: str
    payout_id: int | None = None
    deposit_id: int | None = None
    adjustment_id: int | None = None
    description: str = ""

    @property
    def principal(self) -> Decimal:
        """The amount without its fees (a payout's amount, a reversal's amount given back)."""
        return self.amount + self.fees if self.amount < 0 else self.amount - self.fees


@dataclass(frozen=True)
class RollForward:
    """Opening balance, what moved it by kind, and the closing balance that follows."""

    virtual_account_id: int
    currency: str
    start: datetime | None
    end: datetime
    opening: Decimal
    deposits: Decimal  # + sum of deposits
    payouts: Decimal  # + sum of payout amounts (debited)
    fees: Decimal  # + sum of payout fees (debited)
    reversals: Decimal  # + sum given back (amounts and fees)
    adjustments: Decimal  # signed sum

    @property
    def closing(self) -> Decimal:
        return (
            self.opening
            + self.deposits
            - self.payouts
            - self.fees
            + self.reversals
            + self.adjustments
        )


def _window(field: str, start: datetime | None, end: datetime | None) -> Q:
    """start < field <= end: a movement at exactly `start` belongs to the period before."""
    q = Q()
    if start is not None:
        q &= Q(**{f"{field}__gt": start})
    if end is not None:
        q &= Q(**{f"{field}__lte": end})
    return q


def _charged_payouts(va: VirtualAccount) -> QuerySet[Payout]:
    """Fiat payouts of the account that the upstream accepted, with their debit's parts."""
    return (
        Payout.objects.filter(virtual_account=va, mode=PayoutMode.FIAT, upstream_id__isnull=False)
        .exclude(charged_total__isnull=True, charged_amount__isnull=True)
        .annotate(
            debit_at=Coalesce("upstream_created_at", "charged_at", "submitted_at", "created_at"),
            debit_fees=Coalesce("charged_total_fees", "preview_total_fees", Value(ZERO)),
            debit_amount=Coalesce("charged_amount", "amount"),
        )
    )


def _reversals(va: VirtualAccount) -> QuerySet[PayoutStatusChange]:
    """The moves of each charged fiat payout into a reversing state, dated by the upstream."""
    return (
        PayoutStatusChange.objects.filter(
            payout__in=_charged_payouts(va).values("pk"),
            to_status__in=REVERSING,
        )
        .exclude(from_status__in=REVERSING)
        .annotate(ledger_at=Coalesce("upstream_at", "at"))
        .select_related("payout")
        .order_by("ledger_at", "pk")
    )


def _payout_movement(payout: Payout) -> Movement:
    fees = Decimal(payout.debit_fees).quantize(CENTS)  # type: ignore[attr-defined]
    amount = Decimal(payout.debit_amount).quantize(CENTS)  # type: ignore[attr-defined]
    return Movement(
        at=payout.debit_at,  # type: ignore[attr-defined]
        kind=MovementKind.PAYOUT,
        amount=-(amount + fees),
        fees=fees,
        currency=payout.currency,
        reference=payout.upstream_id or "",
        payout_id=payout.pk,
        description=f"Payout to {payout.recipient}" if payout.recipient_id else "Payout",
    )


def _reversal_movement(change: PayoutStatusChange) -> Movement:
    payout = change.payout
    fees = (payout.charged_total_fees or payout.preview_total_fees or ZERO).quantize(CENTS)
    amount = (payout.charged_amount or payout.amount).quantize(CENTS)
    return Movement(
        at=change.ledger_at,  # type: ignore[attr-defined]
        kind=MovementKind.REVERSAL,
        amount=amount + fees,
        fees=fees,
        currency=payout.currency,
        reference=payout.upstream_id or "",
        payout_id=payout.pk,
        description=f"Payout {change.get_to_status_display().lower()}",
    )


def movements(
    va: VirtualAccount, *, start: datetime | None = None, end: datetime | None = None
) -> Iterator[Movement]:
    """Every movement with start < at <= end, oldest first (four queries, streamed)."""
    deposits = (
        Movement(
            at=d.received_at,
            kind=MovementKind.DEPOSIT,
            amount=d.amount,
            fees=ZERO,
            currency=d.currency,
            reference=d.deposit_id,
            deposit_id=d.pk,
            description=f"Deposit from {d.sender_name}" if d.sender_name else "Deposit",
        )
        for d in Deposit.objects.filter(_window("received_at", start, end), virtual_account=va)
        .order_by("received_at", "pk")
        .iterator(chunk_size=2000)
    )
    payouts = (
        _payout_movement(p)
        for p in _charged_payouts(va)
        .filter(_window("debit_at", start, end))
        .select_related("recipient")
        .order_by(F("debit_at").asc(), "pk")
        .iterator(chunk_size=2000)
    )
    adjustments = (
        Movement(
            at=a.at,
            kind=MovementKind.ADJUSTMENT,
            amount=a.amount,
            fees=ZERO,
            currency=a.currency,
            reference=f"adjustment-{a.pk}",
            adjustment_id=a.pk,
            description=a.reason,
        )
        for a in BalanceAdjustment.objects.filter(_window("at", start, end), virtual_account=va)
        .order_by("at", "pk")
        .iterator(chunk_size=2000)
    )
    reversals = iter(_reversal_movements(va, start, end))
    yield from heapq.merge(deposits, payouts, reversals, adjustments, key=lambda m: m.at)


def _sum(queryset: QuerySet[Any], expression: str) -> Decimal:
    total = queryset.aggregate(total=Coalesce(Sum(expression), Value(ZERO), output_field=_MONEY))
    return Decimal(total["total"]).quantize(CENTS)


def roll_forward(va: VirtualAccount, *, start: datetime | None, end: datetime) -> RollForward:
    """The period start < at <= end: opening (everything up to start), each kind, closing."""

    def totals(lo: datetime | None, hi: datetime | None) -> dict[str, Decimal]:
        charged = _charged_payouts(va).filter(_window("debit_at", lo, hi))
        reversed_ = _reversal_movements(va, lo, hi)
        return {
            "deposits": _sum(
                Deposit.objects.filter(_window("received_at", lo, hi), virtual_account=va),
                "amount",
            ),
            "payouts": _sum(charged, "debit_amount"),
            "fees": _sum(charged, "debit_fees"),
            "reversals": sum((m.amount for m in reversed_), ZERO),
            "adjustments": _sum(
                BalanceAdjustment.objects.filter(_window("at", lo, hi), virtual_account=va),
                "amount",
            ),
        }

    before = totals(None, start) if start is not None else None
    opening = (
        before["deposits"]
        - before["payouts"]
        - before["fees"]
        + before["reversals"]
        + before["adjustments"]
        if before is not None
        else ZERO
    )
    period = totals(start, end)
    return RollForward(
        virtual_account_id=va.pk,
        currency=va.currency,
        start=start,
        end=end,
        opening=opening.quantize(CENTS),
        **period,
    )


def _reversal_movements(
    va: VirtualAccount, start: datetime | None, end: datetime | None
) -> list[Movement]:
    """Reversals with start < at <= end, oldest first (one query).

    A payout is given back once, at its first move into a reversing state: a later second move
    (returned, then failed) is not a second refund."""
    first: dict[int, PayoutStatusChange] = {}
    changes = _reversals(va).filter(_window("ledger_at", None, end))
    for change in changes.iterator(chunk_size=2000):
        first.setdefault(change.payout_id, change)
    return [
        _reversal_movement(change)
        for change in first.values()
        if start is None or change.ledger_at > start  # type: ignore[attr-defined]
    ]


def balance_as_of(va: VirtualAccount, at: datetime) -> Decimal:
    """PayOps's balance of the account at `at`: every movement up to then."""
    return roll_forward(va, start=None, end=at).closing
