"""The finance analytics, one selector per figure, each from our own records in a constant number
of queries whatever the number of payouts (docs/analytics.md).

A period is start..end in UTC days, as the books' reports take it (`day_start` < at <=
`day_end`); "charged" payouts are the ones the upstream accepted with their charged figures,
counted on the day they were charged. Money and corridors come from `books` (the fees report,
the ledger's balance history), never recomputed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

from django.db.models import Count, DecimalField, QuerySet, Sum, Value
from django.db.models.functions import Coalesce, TruncDate
from django.utils.translation import gettext_noop

from accounts.models import VirtualAccount, VirtualAccountMode
from books.statements.fees import FeesReport, fees_report
from books.statements.history import balance_history
from books.statements.statement import day_end, day_start
from gateway.models import Environment
from gateway.selectors import QuotaGauge, quota_gauges
from payouts.models import Payout, PayoutStatus, PayoutStatusChange
from staff import roles
from staff.models import StaffUser
from users.mirror import require

CENT = Decimal("0.01")
ZERO = Decimal("0.00")
_MONEY = DecimalField(max_digits=18, decimal_places=2)


@dataclass(frozen=True)
class Period:
    start: date
    end: date
    environment: Environment | None

    def days(self) -> list[date]:
        return [self.start + timedelta(days=n) for n in range((self.end - self.start).days + 1)]


def _charged(period: Period) -> QuerySet[Payout]:
    rows = Payout.objects.filter(
        upstream_id__isnull=False,
        charged_at__gt=day_start(period.start),
        charged_at__lte=day_end(period.end),
    )
    if period.environment is not None:
        rows = rows.filter(environment=period.environment)
    return rows


def corridor_name(currency: str, recipient_currency: str, country: str, rail: str) -> str:
    """The corridor's name as `books.statements.fees.corridor_of` spells it."""
    return " ".join(
        part for part in (f"{currency}→{recipient_currency or '?'}", country, rail) if part
    )


# --- Volume by corridor and day ---------------------------------------------------------------


@dataclass(frozen=True)
class VolumeRow:
    day: date
    corridor: str
    currency: str
    payouts: int
    amount: Decimal


def volume(*, period: Period, by: StaffUser | None) -> list[VolumeRow]:
    """Payouts charged per UTC day and corridor, their count and amount sent (one query)."""
    require(by, roles.BOOKS_VIEW)
    grouped = (
        _charged(period)
        .annotate(day=TruncDate("charged_at"))
        .values(
            "day",
            "currency",
            "charged_recipient_currency",
            "preview_recipient_currency",
            "recipient__country",
            "quote__account_type",
            "recipient__account_type",
        )
        .annotate(
            payouts=Count("pk"),
            sent=Coalesce(
                Sum(Coalesce("charged_amount", "amount")), Value(ZERO), output_field=_MONEY
            ),
        )
        .order_by("day")
    )
    merged: dict[tuple[date, str, str], VolumeRow] = {}
    for row in grouped:
        day = row["day"] if isinstance(row["day"], date) else date.fromisoformat(str(row["day"]))
        name = corridor_name(
            row["currency"],
            row["charged_recipient_currency"] or row["preview_recipient_currency"] or "",
            row["recipient__country"] or "",
            row["quote__account_type"] or row["recipient__account_type"] or "",
        )
        key = (day, name, row["currency"])
        before = merged.get(key)
        payouts = row["payouts"] + (before.payouts if before else 0)
        amount = Decimal(row["sent"]) + (before.amount if before else ZERO)
        merged[key] = VolumeRow(day, name, row["currency"], payouts, amount.quantize(CENT))
    return sorted(merged.values(), key=lambda r: (r.day, r.corridor))


# --- Success and return rates -----------------------------------------------------------------

OUTCOMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (gettext_noop("Completed"), (PayoutStatus.COMPLETED,)),
    (gettext_noop("Returned"), (PayoutStatus.RETURNED,)),
    (gettext_noop("Failed"), (PayoutStatus.FAILED,)),
    (gettext_noop("Cancelled"), (PayoutStatus.CANCELLED,)),
)


@dataclass(frozen=True)
class OutcomeRow:
    outcome: str  # English, marked with gettext_noop: analytics.figures translates it
    payouts: int
    share: Decimal  # percent of the period's charged payouts, to 0.1


def outcomes(*, period: Period, by: StaffUser | None) -> list[OutcomeRow]:
    """Charged payouts of the period by where they stand now: completed (success), returned,
    failed, cancelled, still in flight; each a share of all of them (one query)."""
    require(by, roles.BOOKS_VIEW)
    counts = {
        row["status"]: row["n"]
        for row in _charged(period).values("status").annotate(n=Count("pk")).order_by()
    }
    total = sum(counts.values())
    rows: list[tuple[str, int]] = []
    named: set[str] = set()
    for label, statuses in OUTCOMES:
        rows.append((label, sum(counts.get(s, 0) for s in statuses)))
        named.update(statuses)
    rows.append((gettext_noop("In flight"), sum(n for s, n in counts.items() if s not in named)))
    return [OutcomeRow(label, n, _percent(n, total)) for label, n in rows]


def _percent(part: int, whole: int) -> Decimal:
    if not whole:
        return Decimal("0.0")
    return (Decimal(part) * 100 / Decimal(whole)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


# --- Time to complete -------------------------------------------------------------------------


@dataclass(frozen=True)
class CompletionRow:
    day: date  # the day the payouts were charged
    payouts: int
    p50_minutes: Decimal
    p95_minutes: Decimal


@dataclass(frozen=True)
class CompletionTimes:
    rows: list[CompletionRow]
    overall: CompletionRow | None


def percentile(ordered: list[float], fraction: float) -> float:
    """Nearest rank: the smallest value with at least `fraction` of the values at or below it."""
    if not ordered:
        return 0.0
    percent = round(fraction * 100)
    rank = max(1, -(-len(ordered) * percent // 100))
    return ordered[rank - 1]


def _minutes(seconds: float) -> Decimal:
    return (Decimal(str(seconds)) / 60).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def completion_times(*, period: Period, by: StaffUser | None) -> CompletionTimes:
    """From charge (the upstream's acceptance) to the first move into completed, p50 and p95 per
    day and over the period (one query: each charged payout's first completion, streamed)."""
    require(by, roles.BOOKS_VIEW)
    changes = (
        PayoutStatusChange.objects.filter(
            payout__in=_charged(period).values("pk"), to_status=PayoutStatus.COMPLETED
        )
        .values_list("payout_id", "at", "payout__charged_at")
        .order_by("payout_id", "at", "pk")
    )
    seen: set[int] = set()
    per_day: dict[date, list[float]] = {}
    everything: list[float] = []
    for payout_id, at, charged_at in changes.iterator(chunk_size=5000):
        if payout_id in seen or charged_at is None:
            continue
        seen.add(payout_id)
        seconds = max(0.0, (at - charged_at).total_seconds())
        per_day.setdefault(charged_at.date(), []).append(seconds)
        everything.append(seconds)

    def row(day: date, values: list[float]) -> CompletionRow:
        values.sort()
        return CompletionRow(
            day, len(values), _minutes(percentile(values, 0.5)), _minutes(percentile(values, 0.95))
        )

    return CompletionTimes(
        rows=[row(day, per_day[day]) for day in sorted(per_day)],
        overall=row(period.end, everything) if everything else None,
    )


# --- Fees and FX spread -----------------------------------------------------------------------


def fees(*, period: Period, by: StaffUser | None) -> FeesReport:
    """The books' fees and FX report for the period (one streamed query)."""
    return fees_report(environment=period.environment, start=period.start, end=period.end, by=by)


# --- Balances over time -----------------------------------------------------------------------


@dataclass(frozen=True)
class BalanceSeries:
    account: VirtualAccount
    balances: list[Decimal]  # one per day of the period, at the day's end


def balances(*, period: Period, by: StaffUser | None) -> list[BalanceSeries]:
    """Each fiat account's ledger balance at the end of every day (books' balance history: a
    fixed number of queries per account, never per payout or per day)."""
    require(by, roles.BOOKS_VIEW)
    accounts = VirtualAccount.objects.filter(mode=VirtualAccountMode.FIAT).select_related(
        "end_user"
    )
    if period.environment is not None:
        accounts = accounts.filter(environment=period.environment)
    return [
        BalanceSeries(
            va,
            [
                day.balance
                for day in balance_history(
                    virtual_account=va, start=period.start, end=period.end, by=by
                )
            ],
        )
        for va in accounts.order_by("pk")
    ]


# --- Budget use -------------------------------------------------------------------------------


def budget_use(*, period: Period, now: datetime, by: StaffUser | None) -> list[QuotaGauge]:
    """Each environment's use of the upstream's weekly call budget this ISO week (the gateway's
    gauges: two queries)."""
    require(by, roles.BOOKS_VIEW)
    environments = [period.environment] if period.environment is not None else None
    return quota_gauges(now=now, environments=environments)


__all__ = [
    "BalanceSeries",
    "CompletionTimes",
    "OutcomeRow",
    "Period",
    "VolumeRow",
    "balances",
    "budget_use",
    "completion_times",
    "fees",
    "outcomes",
    "volume",
]
