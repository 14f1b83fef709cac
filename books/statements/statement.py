"""A virtual account's statement for a period, its upstream check and its CSV rows.

Built on `books.ledger` (the one definition of a balance). A period is a span of whole days in
UTC (settings.TIME_ZONE; the upstream's times are UTC too): from the start of `start` to the end
of `end`, i.e. start 00:00 < at <= end + 1 day 00:00 (the ledger's window, so consecutive
statements chain: one's closing is the next one's opening).

Every function here costs a constant number of queries, whatever the number of movements.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal

from django.core.exceptions import PermissionDenied
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from accounts.models import BalanceSnapshot, VirtualAccount
from accounts.virtual_accounts import virtual_account_refresh
from books.ledger import CENTS, ZERO, Movement, MovementKind, movements, roll_forward
from console.exports import Cell
from console.templatetags.ui import grouped, utc_when
from payouts.models import Payout
from staff import roles
from staff.errors import ServiceError
from staff.models import StaffUser
from users.mirror import require

RATE_STEP = Decimal("0.000001")
# English in the CSV (machine-read, docs/ui.md "Languages"); `Line.kind_text` says them in the
# reader's language on the page and the PDF.
KIND_LABELS = {
    MovementKind.DEPOSIT: gettext_noop("Deposit"),
    MovementKind.PAYOUT: gettext_noop("Payout"),
    MovementKind.REVERSAL: gettext_noop("Return"),
    MovementKind.ADJUSTMENT: gettext_noop("Adjustment"),
}


def day_start(day: date) -> datetime:
    """00:00 UTC of `day`: the instant a period starting on `day` opens."""
    return datetime.combine(day, time.min, tzinfo=UTC)


def day_end(day: date) -> datetime:
    """The end of `day` (00:00 UTC the next day), the instant a period ending on `day` closes."""
    return day_start(day + timedelta(days=1))


def masked(number: str) -> str:
    """An account number with all but its last four digits hidden: •••• 6789."""
    return f"•••• {number[-4:]}" if number else "—"


def payout_rate(payout: Payout) -> Decimal | None:
    """The rate the payout was paid at: recipient amount / amount (the upstream's payout record
    gives `from_amount` and `to_amount` only: rate = to / from), six decimals half-up."""
    amount = payout.charged_amount or payout.amount
    recipient = payout.charged_recipient_amount or payout.preview_recipient_amount
    if not amount or recipient is None:
        return None
    return (recipient / amount).quantize(RATE_STEP, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Line:
    """One line of a statement: a movement, what it did to the balance, the balance after it."""

    at: datetime
    kind: MovementKind
    description: str
    reference: str
    money_out: Decimal  # a payout's amount (without fees)
    fees: Decimal  # a payout's fees (debited with it)
    money_in: Decimal  # a deposit, a return (amount and fees given back), a positive adjustment
    balance: Decimal
    rate: Decimal | None = None
    recipient_amount: Decimal | None = None
    recipient_currency: str = ""
    payout_id: int | None = None

    @property
    def kind_label(self) -> str:
        return KIND_LABELS[self.kind]

    @property
    def kind_text(self) -> str:
        return gettext(KIND_LABELS[self.kind])

    @property
    def net(self) -> Decimal:
        return self.money_in - self.money_out - self.fees


@dataclass(frozen=True)
class UpstreamCheck:
    """The closing balance beside the upstream's reading at the period's end, or why none."""

    reading: Decimal | None
    read_at: datetime | None
    closing: Decimal
    note: str = ""

    @property
    def difference(self) -> Decimal | None:
        return None if self.reading is None else (self.closing - self.reading)

    @property
    def agrees(self) -> bool:
        return self.difference == ZERO

    @property
    def words(self) -> str:
        if self.reading is None:
            return gettext("Not checked with the upstream: %(note)s") % {"note": self.note}
        # The figures and the moment in the reader's language, as the page's (docs/ui.md).
        figures = {"reading": grouped(self.reading), "read_at": utc_when(self.read_at)}
        if self.agrees:
            return gettext("Balances with the upstream (%(reading)s read %(read_at)s)") % figures
        return gettext(
            "Differs from the upstream by %(difference)s: the upstream read %(reading)s at "
            "%(read_at)s"
        ) % {**figures, "difference": grouped(self.difference or ZERO)}


@dataclass
class Statement:
    account: VirtualAccount
    start: date
    end: date
    opening: Decimal
    deposits: Decimal
    payouts: Decimal
    fees: Decimal
    returns: Decimal
    adjustments: Decimal
    closing: Decimal
    lines: list[Line]
    check: UpstreamCheck
    generated_at: datetime = field(default_factory=timezone.now)

    @property
    def currency(self) -> str:
        return self.account.currency

    @property
    def holder(self) -> str:
        user = self.account.end_user
        return f"{user.first_name} {user.last_name}".strip() or user.email

    @property
    def filename_stem(self) -> str:
        ending = self.account.account_number[-4:] if self.account.account_number else "pending"
        return f"statement-{ending}-{self.start:%Y%m%d}-{self.end:%Y%m%d}"


def _lines(
    va: VirtualAccount, opening: Decimal, start: datetime, end: datetime
) -> Iterator[tuple[Movement, Decimal]]:
    balance = opening
    for movement in movements(va, start=start, end=end):
        balance += movement.amount
        yield movement, balance


def statement_lines(va: VirtualAccount, *, opening: Decimal, start: date, end: date) -> list[Line]:
    """The period's movements as lines with the running balance (five queries)."""
    found = list(_lines(va, opening, day_start(start), day_end(end)))
    ids = {m.payout_id for m, _ in found if m.payout_id is not None}
    payouts = {p.pk: p for p in Payout.objects.filter(pk__in=ids)} if ids else {}
    lines = []
    for movement, balance in found:
        payout = payouts.get(movement.payout_id) if movement.payout_id else None
        money_in = movement.amount if movement.amount > 0 else ZERO
        money_out = -movement.amount - movement.fees if movement.amount < 0 else ZERO
        fees = movement.fees if movement.kind == MovementKind.PAYOUT else ZERO
        if movement.kind == MovementKind.ADJUSTMENT and movement.amount < 0:
            money_out = -movement.amount
        lines.append(
            Line(
                at=movement.at,
                kind=movement.kind,
                description=movement.description,
                reference=movement.reference,
                money_out=money_out,
                fees=fees,
                money_in=money_in,
                balance=balance,
                rate=payout_rate(payout) if payout else None,
                recipient_amount=(
                    payout.charged_recipient_amount or payout.preview_recipient_amount
                    if payout
                    else None
                ),
                recipient_currency=(
                    payout.charged_recipient_currency or payout.preview_recipient_currency
                    if payout
                    else ""
                ),
                payout_id=movement.payout_id,
            )
        )
    return lines


def upstream_check(
    va: VirtualAccount,
    *,
    closing: Decimal,
    end: date,
    fresh: BalanceSnapshot | None = None,
    note: str = "",
) -> UpstreamCheck:
    """The closing balance beside the upstream's reading that holds at the period's end (one
    query): a `fresh` reading taken just now for a period not ended yet; else the first reading
    taken at or after the end whose balance had not changed since before the end (its `as_of`,
    the upstream's own time of the last change, at or before the end). Otherwise it says why no
    reading applies; it never compares with a reading that proves nothing about the period."""
    if fresh is not None:
        return UpstreamCheck(reading=fresh.balance, read_at=fresh.read_at, closing=closing)
    at = day_end(end)
    reading = (
        BalanceSnapshot.objects.filter(virtual_account=va, read_at__gte=at)
        .order_by("read_at", "pk")
        .first()
    )
    if reading is None:
        note = note or (
            gettext("the period has not ended yet and no reading was taken")
            if at > timezone.now()
            else gettext("no reading of the upstream's balance was taken after the period ended")
        )
        return UpstreamCheck(reading=None, read_at=None, closing=closing, note=note)
    if reading.as_of > at:
        return UpstreamCheck(
            reading=None,
            read_at=None,
            closing=closing,
            note=gettext(
                "the upstream's balance changed after the period ended (at %(as_of)s) before "
                "it was next read"
            )
            % {"as_of": utc_when(reading.as_of)},
        )
    return UpstreamCheck(reading=reading.balance, read_at=reading.read_at, closing=closing)


def statement_build(
    *,
    virtual_account: VirtualAccount,
    start: date,
    end: date,
    by: StaffUser | None,
    refresh: bool = False,
) -> Statement:
    """The statement of the account for the days start..end (inclusive, UTC).

    With `refresh`, a period that has not ended yet is checked against a fresh reading of the
    upstream's balance (`virtual_account_refresh`: one call through the gateway, made before any
    transaction); a refusal or an upstream fault leaves the check saying why it was not made."""
    require(by, roles.BOOKS_VIEW)
    va = virtual_account
    refresh_note = ""
    fresh = None
    if refresh and day_end(end) > timezone.now() and va.upstream_id:
        last = BalanceSnapshot.objects.filter(virtual_account=va).order_by("-pk").first()
        try:
            va = virtual_account_refresh(virtual_account=va, by=by)
        except (ServiceError, PermissionDenied) as exc:
            refresh_note = gettext("the upstream's balance could not be read now (%(reason)s)") % {
                "reason": exc
            }
        else:
            fresh = (
                BalanceSnapshot.objects.filter(virtual_account=va, pk__gt=last.pk if last else 0)
                .order_by("-pk")
                .first()
            )
    totals = roll_forward(va, start=day_start(start), end=day_end(end))
    lines = statement_lines(va, opening=totals.opening, start=start, end=end)
    closing = totals.closing.quantize(CENTS)
    return Statement(
        account=va,
        start=start,
        end=end,
        opening=totals.opening,
        deposits=totals.deposits,
        payouts=totals.payouts,
        fees=totals.fees,
        returns=totals.reversals,
        adjustments=totals.adjustments,
        closing=closing,
        lines=lines,
        check=upstream_check(va, closing=closing, end=end, fresh=fresh, note=refresh_note),
    )


CSV_HEADER = (
    "Date (UTC)",
    "Type",
    "Description",
    "Reference",
    "Money out",
    "Fees",
    "Money in",
    "Balance",
    "Rate",
    "Recipient amount",
    "Recipient currency",
)


def statement_csv_rows(statement: Statement) -> Iterator[list[Cell]]:
    """The header block (account, period, opening, closing, the upstream check), then the lines;
    every cell goes through console.exports (formula-safe)."""
    va = statement.account
    yield ["Account holder", statement.holder]
    yield ["Account number", masked(va.account_number)]
    yield ["Routing number", va.routing_number or "—"]
    yield ["Currency", statement.currency]
    yield ["Period (UTC)", f"{statement.start:%Y-%m-%d} to {statement.end:%Y-%m-%d}"]
    yield ["Opening balance", statement.opening]
    yield ["Deposits", statement.deposits]
    yield ["Payouts", statement.payouts]
    yield ["Fees", statement.fees]
    yield ["Returns", statement.returns]
    yield ["Adjustments", statement.adjustments]
    yield ["Closing balance", statement.closing]
    yield ["Upstream check", statement.check.words]
    yield []
    yield list(CSV_HEADER)
    for line in statement.lines:
        yield [
            line.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            line.kind_label,
            line.description,
            line.reference,
            line.money_out or None,
            line.fees or None,
            line.money_in or None,
            line.balance,
            line.rate,
            line.recipient_amount,
            line.recipient_currency,
        ]
