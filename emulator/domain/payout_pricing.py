"""Payout pricing: fees on top of the amount, from the seeded corridors or a reserved quote."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from emulator.domain.formats import CENTS
from emulator.domain.pricing import ClientMarkup, Pricing
from emulator.domain.quotations import QuoteRequest, client_markup_of, price_request
from emulator.errors import EmulatorError, resource_error
from emulator.models import ApiClient, Quote, Recipient


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


def _payout_pricing(amount: Decimal, source: Pricing | Quote, *, network: bool) -> PayoutPricing:
    """The payout's figures from a fresh price or a reserved quote: both carry the same fees."""
    fees: dict[str, Any] = {
        "base_fees": {
            "fixed_fee": float(source.base_fixed_fee),
            "percentage_fee": float(source.base_percentage_fee),
            "fx_markup": float(source.base_fx_markup),
        },
        "client_markup": {
            "fixed_fee": float(source.client_fixed_fee),
            "percentage_fee": float(source.client_percentage_fee),
            "fx_markup": float(source.client_fx_markup),
        },
        "penalty_markup": float(source.penalty_markup),
        "total_fees": float(source.total_fees),
    }
    if network:
        fees["network_fee"] = float(source.network_fee)
    return PayoutPricing(
        amount=amount,
        total_fees=source.total_fees,
        service_rate=source.service_rate,
        recipient_amount=_recipient_amount(amount, source.service_rate),
        fees=fees,
    )


def _recipient_amount(amount: Decimal, service_rate: Decimal) -> Decimal:
    return (amount * service_rate).quantize(CENTS, rounding=ROUND_HALF_UP)


def as_resource_error(exc: EmulatorError) -> EmulatorError:
    """Pricing raises in the quotation shape; payouts answer in the resource shape."""
    inner = exc.body.get("error")
    if isinstance(inner, dict):
        return resource_error(exc.status, str(inner.get("code")), str(inner.get("message")))
    return exc


def payout_quote_request(
    recipient: Recipient, amount: Decimal, *, stablecoin: str | None, network: str | None
) -> QuoteRequest:
    """A payout priced as a quotation: from its funding currency (USD, or the stablecoin of a
    crypto payout) to the recipient's, fees on the amount sent."""
    return QuoteRequest(
        base_currency=stablecoin or "USD",
        quote_currency=recipient.currency,
        amount=amount,
        amount_in_destination=False,
        account_type=recipient.account_type,
        network=network,
    )


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
        pricing = price_request(
            payout_quote_request(recipient, amount, stablecoin=stablecoin, network=network),
            at=at,
            client_markup=markup or client_markup_of(client),
            fees_on_top=True,
        )
    except EmulatorError as exc:
        raise as_resource_error(exc) from None
    return _payout_pricing(amount, pricing, network=stablecoin is not None)


def pricing_from_quote(quote: Quote, amount: Decimal) -> PayoutPricing:
    return _payout_pricing(amount, quote, network=bool(quote.network))
