"""Quote arithmetic of decisions.md: fees, markups, penalty hours and both solving directions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, ROUND_UP, Decimal
from zoneinfo import ZoneInfo

from django.conf import settings

from emulator.domain.corridors import FEES, NETWORK_FEES, RATES, FeeProfile, pair_enabled
from emulator.errors import quote_error

CENT = Decimal("0.01")
RATE_STEP = Decimal("0.000001")
ZERO = Decimal("0")
NEW_YORK = ZoneInfo("America/New_York")


def money(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def rate6(value: Decimal) -> Decimal:
    return value.quantize(RATE_STEP, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class ClientMarkup:
    fixed_fee: Decimal = ZERO
    percentage_fee: Decimal = ZERO
    fx_markup: Decimal = ZERO


@dataclass(frozen=True)
class Pricing:
    """Every figure of a quote, as Decimals quantised the upstream's way."""

    base_amount: Decimal
    quote_amount: Decimal
    rate: Decimal
    service_rate: Decimal
    base_fixed_fee: Decimal
    base_percentage_fee: Decimal
    base_fx_markup: Decimal
    client_fixed_fee: Decimal
    client_percentage_fee: Decimal
    client_fx_markup: Decimal
    network_fee: Decimal
    penalty_markup: Decimal
    total_fees: Decimal


def is_off_hours(at: datetime) -> bool:
    """18:00-08:00 America/New_York and weekends (no holiday calendar)."""
    local = at.astimezone(NEW_YORK)
    return local.weekday() >= 5 or local.hour >= 18 or local.hour < 8


def penalty_markup_at(at: datetime) -> Decimal:
    return Decimal(str(settings.EMULATOR_PENALTY_MARKUP)) if is_off_hours(at) else ZERO


def _total_fees(base_amount: Decimal, fixed: Decimal, pct: Decimal) -> Decimal:
    return money(fixed + base_amount * pct)


def _forward(base_amount: Decimal, fixed: Decimal, pct: Decimal, service_rate: Decimal) -> Decimal:
    return money((base_amount - _total_fees(base_amount, fixed, pct)) * service_rate)


def price(
    *,
    base_currency: str,
    quote_currency: str,
    account_type: str,
    network: str | None,
    amount: Decimal,
    amount_in_destination: bool,
    at: datetime,
    client_markup: ClientMarkup | None = None,
    fees_on_top: bool = False,
) -> Pricing:
    """Prices a validated request; raises CURRENCY_PAIR_NOT_ENABLED, FEES_EXCEED_AMOUNT (409) or
    INVALID_CALCULATED_AMOUNT. `amount` is the base amount, or the recipient amount when
    `amount_in_destination` (then base_amount is solved and rounded up to the cent).

    A quotation deducts its fees from the amount. A payout charges them on top (`fees_on_top`,
    decisions.md "Payout pricing"): the recipient gets amount x service_rate, and fees larger
    than the amount are no reason to refuse (the balance check is the payout's own)."""
    profile = _fee_profile(base_currency, quote_currency, account_type)
    markup = client_markup or ClientMarkup()
    network_fee = NETWORK_FEES.get((base_currency, network or ""), ZERO)
    penalty = penalty_markup_at(at)
    rate = rate6(RATES[quote_currency])
    service_rate = rate6(rate * (1 - profile.fx_markup - markup.fx_markup - penalty))
    fixed = profile.fixed_fee + markup.fixed_fee + network_fee
    pct = profile.percentage_fee + markup.percentage_fee
    amount = money(amount)
    if amount_in_destination:
        base_amount, total_fees, quote_amount = _solve_for_destination(
            amount, fixed, pct, service_rate
        )
    else:
        base_amount = amount
        total_fees = _total_fees(base_amount, fixed, pct)
        quote_amount = _recipient_amount(base_amount, total_fees, service_rate, fees_on_top)
    return Pricing(
        base_amount=base_amount,
        quote_amount=quote_amount,
        rate=rate,
        service_rate=service_rate,
        base_fixed_fee=money(profile.fixed_fee),
        base_percentage_fee=profile.percentage_fee,
        base_fx_markup=profile.fx_markup,
        client_fixed_fee=money(markup.fixed_fee),
        client_percentage_fee=markup.percentage_fee,
        client_fx_markup=markup.fx_markup,
        network_fee=money(network_fee),
        penalty_markup=penalty,
        total_fees=total_fees,
    )


def _fee_profile(base_currency: str, quote_currency: str, account_type: str) -> FeeProfile:
    """The corridor's fees, or CURRENCY_PAIR_NOT_ENABLED."""
    profile = FEES.get((quote_currency, account_type))
    if profile is None or not pair_enabled(base_currency, quote_currency, account_type):
        raise quote_error(
            400,
            "CURRENCY_PAIR_NOT_ENABLED",
            "currency pair is not enabled for this account type",
            {
                "base_currency": base_currency,
                "quote_currency": quote_currency,
                "account_type": account_type,
            },
        )
    return profile


def _solve_for_destination(
    requested: Decimal, fixed: Decimal, pct: Decimal, service_rate: Decimal
) -> tuple[Decimal, Decimal, Decimal]:
    """Base amount (rounded up to the cent), total fees and quote amount for a recipient amount."""
    if service_rate <= 0 or pct >= 1:
        raise _invalid_calculated(requested, ZERO)
    base_amount = ((requested / service_rate + fixed) / (1 - pct)).quantize(CENT, rounding=ROUND_UP)
    # Rounding of the fees can leave the recipient a cent short: step up until covered.
    while _forward(base_amount, fixed, pct, service_rate) < requested:
        base_amount += CENT
    total_fees = _total_fees(base_amount, fixed, pct)
    if money(requested / service_rate) < total_fees:
        raise _invalid_calculated(requested, base_amount)
    return base_amount, total_fees, requested


def _recipient_amount(
    base_amount: Decimal, total_fees: Decimal, service_rate: Decimal, fees_on_top: bool
) -> Decimal:
    """What the recipient gets: fees on top (a payout) or deducted (a quotation, FEES_EXCEED_AMOUNT
    when they eat the whole amount)."""
    if fees_on_top:
        return money(base_amount * service_rate)
    if total_fees >= base_amount:
        raise quote_error(
            409,
            "FEES_EXCEED_AMOUNT",
            "total fees exceed the amount",
            {"amount": float(base_amount), "total_fees": float(total_fees)},
        )
    return money((base_amount - total_fees) * service_rate)


def _invalid_calculated(requested: Decimal, calculated: Decimal) -> Exception:
    return quote_error(
        400,
        "INVALID_CALCULATED_AMOUNT",
        "amount is too small to cover the fees",
        {"requested_amount": float(requested), "calculated_base_amount": float(calculated)},
    )
