"""Payout pricing: fees on top of the amount, from the seeded corridors or a reserved quote."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from emulator.domain.formats import CENTS
from emulator.errors import EmulatorError, resource_error
from emulator.models import ApiClient, Quote, Recipient
from emulator.pricing import ClientMarkup, price
from emulator.quotes import client_markup_of


@dataclass(frozen=True)
class PayoutPricing:
    """Fees are charged on top of the amount (interface.md 4.4 rule 1: amount plus fees)."""

    amount: Decimal
    total_fees: Decimal
    service_rate: Decimal
    recipient_amount: Decimal
    fees: dict[str, Any]

    @property
    def total_cost(self) -> Decimal:
        return self.amount + self.total_fees


def _fees_json(
    *,
    base: tuple[Decimal, Decimal, Decimal],
    client: tuple[Decimal, Decimal, Decimal],
    network_fee: Decimal,
    penalty: Decimal,
    total: Decimal,
    network: bool,
) -> dict[str, Any]:
    fees: dict[str, Any] = {
        "base_fees": {
            "fixed_fee": float(base[0]),
            "percentage_fee": float(base[1]),
            "fx_markup": float(base[2]),
        },
        "client_markup": {
            "fixed_fee": float(client[0]),
            "percentage_fee": float(client[1]),
            "fx_markup": float(client[2]),
        },
        "penalty_markup": float(penalty),
        "total_fees": float(total),
    }
    if network:
        fees["network_fee"] = float(network_fee)
    return fees


def _recipient_amount(amount: Decimal, service_rate: Decimal) -> Decimal:
    return (amount * service_rate).quantize(CENTS, rounding=ROUND_HALF_UP)


def as_resource_error(exc: EmulatorError) -> EmulatorError:
    """Pricing raises in the quotation shape; payouts answer in the resource shape."""
    inner = exc.body.get("error")
    if isinstance(inner, dict):
        return resource_error(exc.status, str(inner.get("code")), str(inner.get("message")))
    return exc


def price_payout(
    *,
    client: ApiClient,
    amount: Decimal,
    recipient: Recipient,
    stablecoin: str | None,
    network: str | None,
    markup: ClientMarkup | None,
    at: datetime,
) -> PayoutPricing:
    try:
        pricing = price(
            base_currency=stablecoin or "USD",
            quote_currency=recipient.currency,
            account_type=recipient.account_type,
            network=network,
            amount=amount,
            amount_in_destination=False,
            at=at,
            client_markup=markup or client_markup_of(client),
        )
    except EmulatorError as exc:
        raise as_resource_error(exc) from None
    return PayoutPricing(
        amount=amount,
        total_fees=pricing.total_fees,
        service_rate=pricing.service_rate,
        recipient_amount=_recipient_amount(amount, pricing.service_rate),
        fees=_fees_json(
            base=(pricing.base_fixed_fee, pricing.base_percentage_fee, pricing.base_fx_markup),
            client=(
                pricing.client_fixed_fee,
                pricing.client_percentage_fee,
                pricing.client_fx_markup,
            ),
            network_fee=pricing.network_fee,
            penalty=pricing.penalty_markup,
            total=pricing.total_fees,
            network=stablecoin is not None,
        ),
    )


def pricing_from_quote(quote: Quote, amount: Decimal) -> PayoutPricing:
    return PayoutPricing(
        amount=amount,
        total_fees=quote.total_fees,
        service_rate=quote.service_rate,
        recipient_amount=_recipient_amount(amount, quote.service_rate),
        fees=_fees_json(
            base=(quote.base_fixed_fee, quote.base_percentage_fee, quote.base_fx_markup),
            client=(quote.client_fixed_fee, quote.client_percentage_fee, quote.client_fx_markup),
            network_fee=quote.network_fee,
            penalty=quote.penalty_markup,
            total=quote.total_fees,
            network=bool(quote.network),
        ),
    )
