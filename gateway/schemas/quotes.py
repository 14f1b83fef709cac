"""Models of quotations and of the payout preview."""

from __future__ import annotations

from gateway.schemas.common import Money, QuoteStatus, Timestamp, UpstreamModel


class FeeMarkup(UpstreamModel):
    fixed_fee: Money | None = None
    percentage_fee: Money | None = None
    fx_markup: Money | None = None


class Fees(UpstreamModel):
    """Fee breakdown; some responses carry only part of it (e.g. only total_fees)."""

    base_fees: FeeMarkup | None = None
    client_markup: FeeMarkup | None = None
    network_fee: Money | None = None
    penalty_markup: Money | None = None
    total_fees: Money | None = None


class Quote(UpstreamModel):
    quote_id: str
    base_amount: Money
    base_currency: str
    quote_amount: Money
    quote_currency: str
    account_type: str | None = None
    network: str | None = None
    rate: Money
    service_rate: Money
    expiration_ts: Timestamp
    status: QuoteStatus
    fees: Fees | None = None


class PayoutPreview(UpstreamModel):
    amount: Money
    currency: str
    fees: Fees | None = None
    recipient_amount: Money
    recipient_currency: str
    quote_id: str | None = None
    quote_expires_at: Timestamp | None = None
