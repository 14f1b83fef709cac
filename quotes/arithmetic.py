"""Quote arithmetic (interface.md 4.2 fee rules, decisions.md "Quote arithmetic"): a pure check.

PayOps never trusts a figure it can recompute. Given a quote's own numbers, `recompute` applies
the documented rules and says, figure by figure, whether the upstream agrees within a cent:

1. total fixed fee   = base fixed + client fixed + network fee
2. total percentage  = base percentage + client percentage (fractions: 0.01 is 1 %)
3. total fees        = total fixed + base_amount x total percentage   (money, half-up to the cent)
4. service rate      = rate x (1 - base fx - client fx - penalty)      (6 decimals, half-up)
5. quote amount      = (base_amount - total fees) x service rate       (money, half-up)

With `amount_in_destination` the upstream solved rule 5 for base_amount and rounded it *up* to the
cent, so the recipient may get slightly more than asked: one cent of the base currency, converted
at the service rate, is allowed on top of the cent.

Each check carries its tolerance and the reason a difference within it is expected, so a page
never says "agree" beside a difference it does not explain.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

from django.utils.translation import gettext, gettext_lazy

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


CENT = Decimal("0.01")
RATE_STEP = Decimal("0.000001")
ZERO = Decimal("0")


def money(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def rate6(value: Decimal) -> Decimal:
    return value.quantize(RATE_STEP, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class QuoteFigures:
    """A quote's numbers as the upstream stated them (a missing part of the breakdown is None)."""

    base_amount: Decimal
    quote_amount: Decimal
    rate: Decimal
    service_rate: Decimal
    amount_in_destination: bool = False
    base_fixed_fee: Decimal | None = None
    base_percentage_fee: Decimal | None = None
    base_fx_markup: Decimal | None = None
    client_fixed_fee: Decimal | None = None
    client_percentage_fee: Decimal | None = None
    client_fx_markup: Decimal | None = None
    network_fee: Decimal | None = None
    penalty_markup: Decimal | None = None
    total_fees: Decimal | None = None
    # Only to label the figures (money in the base or the destination currency); "" if unknown.
    base_currency: str = ""
    quote_currency: str = ""


@dataclass(frozen=True)
class FigureCheck:
    """One recomputed figure beside the stated one."""

    name: str
    label: StrOrPromise
    stated: Decimal | None
    expected: Decimal
    tolerance: Decimal
    # The currency of a money figure, "" for a rate.
    currency: str = ""
    # Why a difference within the tolerance is expected (the rounding rule behind it).
    why: StrOrPromise = ""

    @property
    def difference(self) -> Decimal | None:
        return None if self.stated is None else self.stated - self.expected

    @property
    def agrees(self) -> bool:
        return self.stated is not None and abs(self.stated - self.expected) <= self.tolerance

    @property
    def exact(self) -> bool:
        return self.stated is not None and self.stated == self.expected


@dataclass(frozen=True)
class Recomputation:
    total_fixed_fee: Decimal | None
    total_percentage: Decimal | None
    total_fees: Decimal | None
    amount_after_fees: Decimal | None
    service_rate: Decimal | None
    quote_amount: Decimal | None
    checks: tuple[FigureCheck, ...]
    # What could not be checked because the answer carried only part of the breakdown.
    unchecked: tuple[str, ...]

    @property
    def disagreements(self) -> tuple[FigureCheck, ...]:
        return tuple(check for check in self.checks if not check.agrees)

    @property
    def agrees(self) -> bool:
        """Every stated figure is within its tolerance of the recomputed one."""
        return not self.disagreements

    @property
    def exact(self) -> bool:
        """Every stated figure equals the recomputed one: no difference to explain."""
        return all(check.exact for check in self.checks)

    @property
    def explained(self) -> tuple[FigureCheck, ...]:
        """The figures that differ within their tolerance: each one's `why` says why."""
        return tuple(check for check in self.checks if check.agrees and not check.exact)


WHY_CENT = gettext_lazy(
    "Money is rounded half-up to the cent, and the upstream may round at another step than "
    "PayOps' recompute: up to a cent apart is rounding."
)
WHY_RATE = gettext_lazy(
    "Rates are rounded half-up to 6 decimals: one step (0.000001) apart is rounding."
)
WHY_SOURCE = gettext_lazy(
    "Rounding: the upstream rounds the recipient amount half-up to the cent; PayOps recomputes "
    "(what you send - total fees) x service rate and rounds it the same way: up to a cent apart."
)
WHY_DESTINATION = gettext_lazy(
    "Rounding: you asked for the amount to arrive, so the upstream solved what you send for it "
    "and rounded that up to the cent of the source currency, then states the amount asked. "
    "PayOps recomputes forward from the rounded-up amount, which buys up to one source cent at "
    "the service rate (plus a cent of rounding) more than asked: the recipient gets at least the "
    "amount asked."
)
WHY_FLOOR = gettext_lazy("Rounding up must never leave the recipient short of what was asked.")


def _sum(*parts: Decimal | None) -> Decimal:
    return sum((part or ZERO for part in parts), ZERO)


def _service_rate(figures: QuoteFigures) -> Decimal:
    markups = (
        _sum(figures.base_fx_markup) + _sum(figures.client_fx_markup) + _sum(figures.penalty_markup)
    )
    return rate6(figures.rate * (1 - markups))


def _amount_checks(figures: QuoteFigures, recomputed: Decimal, rate: Decimal) -> list[FigureCheck]:
    """Rule 5's check, with its tolerance by mode; in the destination mode also its floor."""
    tolerance, why = CENT, WHY_SOURCE
    if figures.amount_in_destination:
        tolerance, why = CENT + money(CENT * rate), WHY_DESTINATION
    label, currency = gettext("Recipient gets"), figures.quote_currency
    checks = [
        FigureCheck(
            "quote_amount", label, figures.quote_amount, recomputed, tolerance, currency, why
        )
    ]
    if figures.amount_in_destination and recomputed < figures.quote_amount - CENT:
        floor_label = gettext("Recipient gets at least the requested amount")
        checks.append(
            FigureCheck(
                "quote_amount_floor",
                floor_label,
                recomputed,
                figures.quote_amount,
                CENT,
                currency,
                WHY_FLOOR,
            )
        )
    return checks


def recompute(figures: QuoteFigures) -> Recomputation:
    """Recompute every derivable figure of `figures` and compare it with the stated one."""
    checks: list[FigureCheck] = []
    unchecked: list[str] = []

    total_fixed = total_pct = total_fees = None
    if figures.base_fixed_fee is not None or figures.base_percentage_fee is not None:
        total_fixed = _sum(figures.base_fixed_fee, figures.client_fixed_fee, figures.network_fee)
        total_pct = _sum(figures.base_percentage_fee, figures.client_percentage_fee)
        total_fees = money(total_fixed + figures.base_amount * total_pct)
        stated, currency = figures.total_fees, figures.base_currency
        checks.append(
            FigureCheck(
                "total_fees", gettext("Total fees"), stated, total_fees, CENT, currency, WHY_CENT
            )
        )
    else:
        unchecked.append("total_fees")

    service_rate = None
    if figures.base_fx_markup is not None or figures.penalty_markup is not None:
        service_rate = _service_rate(figures)
        stated_rate = figures.service_rate
        checks.append(
            FigureCheck(
                "service_rate",
                gettext("Service rate"),
                stated_rate,
                service_rate,
                RATE_STEP,
                why=WHY_RATE,
            )
        )
    else:
        unchecked.append("service_rate")

    fees_used = total_fees if total_fees is not None else figures.total_fees
    rate_used = service_rate if service_rate is not None else figures.service_rate
    after = quote_amount = None
    if fees_used is not None:
        after = figures.base_amount - fees_used
        quote_amount = money(after * rate_used)
        checks.extend(_amount_checks(figures, quote_amount, rate_used))
    else:
        unchecked.append("quote_amount")

    return Recomputation(
        total_fixed_fee=total_fixed,
        total_percentage=total_pct,
        total_fees=total_fees,
        amount_after_fees=after,
        service_rate=service_rate,
        quote_amount=quote_amount,
        checks=tuple(checks),
        unchecked=tuple(unchecked),
    )
