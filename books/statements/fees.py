"""The fees and FX report: what payouts paid, per period and corridor, fee by fee, and the spread
against the commercial rate (docs/books.md "Fees and FX" says how each figure is derived).

One streamed pass over the period's payouts (one query, with their quote and recipient),
whatever their number; the sums are kept per corridor in memory (a handful of corridors).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext

from books.ledger import REVERSING
from books.statements.statement import RATE_STEP, day_end, day_start
from console.exports import Cell
from gateway.models import Environment
from payouts.models import Payout
from staff import roles
from staff.models import StaffUser
from users.mirror import require

CENT = Decimal("0.01")
ZERO = Decimal("0.00")


def _money(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def _dec(value: Any) -> Decimal:
    if value in (None, ""):
        return Decimal("0")
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return Decimal("0")


@dataclass(frozen=True)
class PayoutFees:
    """One payout's fees and FX spread (money in the payout's currency unless named)."""

    amount: Decimal
    fixed: Decimal
    percentage: Decimal
    network: Decimal
    unitemised: Decimal  # total fees the breakdown does not explain (e.g. no breakdown given)
    total_fees: Decimal
    fx_markup_fraction: Decimal
    penalty_fraction: Decimal
    rate: Decimal  # the commercial rate
    service_rate: Decimal
    fx_markup_usd: Decimal
    penalty_usd: Decimal
    fx_markup_recipient: Decimal
    penalty_recipient: Decimal

    @property
    def spread_usd(self) -> Decimal:
        return self.fx_markup_usd + self.penalty_usd

    @property
    def spread_recipient(self) -> Decimal:
        return self.fx_markup_recipient + self.penalty_recipient


def payout_fees(payout: Payout) -> PayoutFees:
    """A payout's figures from its charged breakdown (else its preview's) and its quote."""
    breakdown: dict[str, Any] = payout.charged_fees or payout.preview_fees or {}
    base = breakdown.get("base_fees") or {}
    client = breakdown.get("client_markup") or {}
    amount = payout.charged_amount or payout.amount
    fixed = _money(_dec(base.get("fixed_fee")) + _dec(client.get("fixed_fee")))
    percentage = _money(
        amount * (_dec(base.get("percentage_fee")) + _dec(client.get("percentage_fee")))
    )
    network = _money(_dec(breakdown.get("network_fee")))
    total = payout.charged_total_fees
    if total is None:
        total = payout.preview_total_fees
    if total is None:
        total = _money(_dec(breakdown.get("total_fees")))
    fx = _dec(base.get("fx_markup")) + _dec(client.get("fx_markup"))
    penalty = _dec(breakdown.get("penalty_markup"))
    quote = payout.quote
    recipient = payout.charged_recipient_amount or payout.preview_recipient_amount
    if quote is not None and quote.rate:
        rate, service_rate = quote.rate, quote.service_rate
    elif recipient is not None and amount and (fx + penalty) < 1:
        # No quote kept: the rate paid is recipient / amount; the commercial rate is read back
        # through service_rate = rate x (1 - markups) (decisions.md "Quote arithmetic").
        service_rate = (recipient / amount).quantize(RATE_STEP, rounding=ROUND_HALF_UP)
        rate = (service_rate / (1 - fx - penalty)).quantize(RATE_STEP, rounding=ROUND_HALF_UP)
    else:
        rate = service_rate = Decimal("0")
    return PayoutFees(
        amount=amount,
        fixed=fixed,
        percentage=percentage,
        network=network,
        unitemised=total - fixed - percentage - network,
        total_fees=total,
        fx_markup_fraction=fx,
        penalty_fraction=penalty,
        rate=rate,
        service_rate=service_rate,
        fx_markup_usd=_money(amount * fx),
        penalty_usd=_money(amount * penalty),
        fx_markup_recipient=_money(amount * rate * fx),
        penalty_recipient=_money(amount * rate * penalty),
    )


def corridor_of(payout: Payout) -> str:
    """Source currency → recipient currency and country, over the rail: `USD→MXN MX SPEI`."""
    recipient_currency = (
        payout.charged_recipient_currency or payout.preview_recipient_currency or "?"
    )
    country = payout.recipient.country if payout.recipient_id else ""
    rail = (payout.quote.account_type if payout.quote else "") or (
        payout.recipient.account_type if payout.recipient_id else ""
    )
    return " ".join(
        part for part in (f"{payout.currency}→{recipient_currency}", country, rail) if part
    )


@dataclass
class CorridorRow:
    corridor: str
    currency: str
    recipient_currency: str
    payouts: int = 0
    amount: Decimal = ZERO
    fixed: Decimal = ZERO
    percentage: Decimal = ZERO
    network: Decimal = ZERO
    unitemised: Decimal = ZERO
    total_fees: Decimal = ZERO
    fx_markup_usd: Decimal = ZERO
    penalty_usd: Decimal = ZERO
    fx_markup_recipient: Decimal = ZERO
    penalty_recipient: Decimal = ZERO
    recipient_amount: Decimal = ZERO

    def add(self, figures: PayoutFees, recipient_amount: Decimal) -> None:
        self.payouts += 1
        self.recipient_amount += recipient_amount
        for name in (
            "amount",
            "fixed",
            "percentage",
            "network",
            "unitemised",
            "total_fees",
            "fx_markup_usd",
            "penalty_usd",
            "fx_markup_recipient",
            "penalty_recipient",
        ):
            setattr(self, name, getattr(self, name) + getattr(figures, name))

    @property
    def spread_usd(self) -> Decimal:
        return self.fx_markup_usd + self.penalty_usd

    @property
    def spread_recipient(self) -> Decimal:
        return self.fx_markup_recipient + self.penalty_recipient

    @property
    def cost_usd(self) -> Decimal:
        """Fees plus the spread, in the payouts' currency."""
        return self.total_fees + self.spread_usd


@dataclass
class FeesReport:
    start: date
    end: date
    environment: Environment | None
    corridor: str
    rows: list[CorridorRow] = field(default_factory=list)
    corridors: list[str] = field(default_factory=list)

    @property
    def total(self) -> CorridorRow:
        total = CorridorRow(gettext("All corridors"), "", "")
        for row in self.rows:
            for item in fields(CorridorRow):
                if item.name in ("corridor", "currency", "recipient_currency"):
                    continue
                if item.name in ("fx_markup_recipient", "penalty_recipient", "recipient_amount"):
                    continue  # in different currencies: not summed
                setattr(total, item.name, getattr(total, item.name) + getattr(row, item.name))
        return total


def _paid(environment: Environment | None, start: date, end: date) -> QuerySet[Payout]:
    """Payouts charged in the period that kept their fees (not given back: failed, returned,
    cancelled ones had their whole debit reversed, decisions.md 3)."""
    rows = Payout.objects.filter(
        upstream_id__isnull=False,
        charged_at__gt=day_start(start),
        charged_at__lte=day_end(end),
    ).exclude(status__in=REVERSING)
    if environment is not None:
        rows = rows.filter(environment=environment)
    return rows.select_related("quote", "recipient").order_by("charged_at", "pk")


def fees_report(
    *,
    environment: Environment | None,
    start: date,
    end: date,
    corridor: str = "",
    by: StaffUser | None,
) -> FeesReport:
    """Fees and FX spread per corridor for payouts charged start..end (UTC days)."""
    require(by, roles.BOOKS_VIEW)
    report = FeesReport(start=start, end=end, environment=environment, corridor=corridor)
    rows: dict[str, CorridorRow] = {}
    for payout in _paid(environment, start, end).iterator(chunk_size=2000):
        name = corridor_of(payout)
        recipient_currency = (
            payout.charged_recipient_currency or payout.preview_recipient_currency or ""
        )
        row = rows.get(name)
        if row is None:
            row = rows[name] = CorridorRow(name, payout.currency, recipient_currency)
        if corridor and name != corridor:
            continue
        recipient_amount = payout.charged_recipient_amount or payout.preview_recipient_amount
        row.add(payout_fees(payout), recipient_amount or ZERO)
    report.corridors = sorted(rows)
    report.rows = [rows[name] for name in sorted(rows) if not corridor or name == corridor]
    return report


FEES_CSV_HEADER = (
    "Corridor",
    "Payouts",
    "Currency",
    "Amount sent",
    "Fixed fees",
    "Percentage fees",
    "Network fees",
    "Unitemised fees",
    "Total fees",
    "FX markup (USD)",
    "Penalty (USD)",
    "Spread (USD)",
    "Recipient currency",
    "Recipient amount",
    "FX markup (recipient currency)",
    "Penalty (recipient currency)",
    "Spread (recipient currency)",
)


def fees_csv_rows(report: FeesReport) -> Iterator[list[Cell]]:
    for row in report.rows:
        yield [
            row.corridor,
            row.payouts,
            row.currency,
            row.amount,
            row.fixed,
            row.percentage,
            row.network,
            row.unitemised,
            row.total_fees,
            row.fx_markup_usd,
            row.penalty_usd,
            row.spread_usd,
            row.recipient_currency,
            row.recipient_amount,
            row.fx_markup_recipient,
            row.penalty_recipient,
            row.spread_recipient,
        ]
