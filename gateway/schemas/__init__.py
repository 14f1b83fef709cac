"""Strict, typed models of every upstream response (unknown fields kept, never failing)."""

from gateway.schemas.auth import AccessToken
from gateway.schemas.common import Money, PayoutStatus, QuoteStatus, Timestamp, UpstreamModel
from gateway.schemas.parties import (
    Balance,
    Message,
    Recipient,
    RecipientPage,
    User,
    VirtualAccount,
)
from gateway.schemas.payouts import (
    DepositInstructions,
    OtpSent,
    Payout,
    PayoutCreated,
    PayoutEvent,
    PayoutPage,
)
from gateway.schemas.quotes import FeeMarkup, Fees, PayoutPreview, Quote

__all__ = [
    "AccessToken",
    "Balance",
    "DepositInstructions",
    "FeeMarkup",
    "Fees",
    "Message",
    "Money",
    "OtpSent",
    "Payout",
    "PayoutCreated",
    "PayoutEvent",
    "PayoutPage",
    "PayoutPreview",
    "PayoutStatus",
    "Quote",
    "QuoteStatus",
    "Recipient",
    "RecipientPage",
    "Timestamp",
    "UpstreamModel",
    "User",
    "VirtualAccount",
]
