"""Models of payouts: the creation answer (lowercase status), the record (UPPERCASE), the list."""

from __future__ import annotations

from pydantic import Field

from gateway.schemas.common import Money, PayoutStatus, Timestamp, UpstreamModel
from gateway.schemas.quotes import Fees


class DepositInstructions(UpstreamModel):
    wallet_address: str
    network: str
    currency: str
    amount: Money
    expires_at: Timestamp


class PayoutCreated(UpstreamModel):
    id: str
    status: PayoutStatus
    amount: Money
    currency: str
    fees: Fees | Money | None = None
    recipient_amount: Money | None = None
    recipient_currency: str | None = None
    quote_id: str | None = None
    deposit_instructions: DepositInstructions | None = None


class PayoutEvent(UpstreamModel):
    status: PayoutStatus
    at: Timestamp


class Payout(UpstreamModel):
    payout_id: str
    status: PayoutStatus
    from_amount: Money | None = None
    from_currency: str | None = None
    to_amount: Money | None = None
    to_currency: str | None = None
    fee: Money | None = None
    recipient_id: str | None = None
    quote_id: str | None = None
    reference: str | None = None
    payment_method: str | None = None
    uetr: str | None = None
    events: list[PayoutEvent] = Field(default_factory=list)
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None


class PayoutPage(UpstreamModel):
    payouts: list[Payout]
    page: int
    limit: int
    total: int
    total_pages: int


class OtpSent(UpstreamModel):
    success: bool
    message: str | None = None
    expires_at: Timestamp | None = Field(default=None, alias="expiresAt")
