"""The payout as /api/v1 shows it: what was previewed (shown to the approvers), what the upstream
charged, any difference between the two, the deposit instructions, documents and timeline."""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ninja import Field, Schema

from gateway.schemas import DepositInstructions, FeeMarkup, Fees
from payouts.models import Payout, PayoutDocument
from payouts.release.waiting import wait_text

CENT = Decimal("0.01")
MONEY = "A decimal string with 2 places, in the currency named beside it."


class UpstreamWaitOut(Schema):
    """The initiation waits to be sent again (same key): why, which attempt, when."""

    reason: str = Field(
        description="rate_limit, no_answer, server_error or budget (PayOps's own limiter)."
    )
    attempt: int = Field(description="The gateway's next attempt; 0: the recovery's next send.")
    next_try_at: datetime | None
    since: datetime | None
    message: str = Field(description="The same in words, as the payout page shows it.")


def upstream_wait_out(payout: Payout) -> UpstreamWaitOut | None:
    message = wait_text(payout)
    if not message:
        return None
    return UpstreamWaitOut(
        reason=payout.upstream_wait,
        attempt=payout.upstream_wait_attempt,
        next_try_at=payout.upstream_wait_until,
        since=payout.upstream_wait_since,
        message=message,
    )


class TimelineOut(Schema):
    at: datetime
    from_status: str
    to_status: str
    source: str = Field(description="staff, event, poll or system.")
    by: str | None
    reason: str


class DocumentOut(Schema):
    id: int
    kind: str
    file_name: str
    content_type: str = Field(description="Detected from the content, not the name.")
    size: int
    sha256: str
    uploaded_by: str
    uploaded_at: datetime


class FeeMarkupOut(Schema):
    fixed_fee: Decimal | None = Field(None, description="Money, in the fees' currency.")
    percentage_fee: Decimal | None = Field(None, description="Fraction of the amount: 0.01 is 1 %.")
    fx_markup: Decimal | None = Field(None, description="Fraction of the rate.")


class FeesOut(Schema):
    """The upstream's fee breakdown; it may give only part of it (always `total_fees`)."""

    base_fees: FeeMarkupOut | None = Field(None, description="The platform's fees of the rail.")
    client_markup: FeeMarkupOut | None = Field(None, description="The client's markup.")
    network_fee: Decimal | None = Field(
        None, description="Crypto: the blockchain network's fee, included in total_fees."
    )
    penalty_markup: Decimal | None = Field(
        None, description="Off-hours surcharge, a fraction of the rate (lowers the FX rate)."
    )
    total_fees: Decimal | None = Field(
        None, description="Money charged on top of the amount (fixed fees + percentage fees)."
    )


class PreviewOut(Schema):
    total_fees: Decimal | None = Field(description="Fees of the last preview. " + MONEY)
    fees: dict[str, Any] = Field(
        description="The preview's fee breakdown as the upstream gave it (FeesOut's fields); "
        "a crypto payout's includes network_fee."
    )
    currency: str = Field(description="Currency of the amount and of the fees.")
    total: Decimal | None = Field(
        description="amount + total_fees: what the account is debited (fiat), or the deposit "
        "to send (crypto)."
    )
    total_currency: str = Field(
        description="Currency of `total`: the payout's (fiat) or the stablecoin deposited (crypto)."
    )
    recipient_amount: Decimal | None
    recipient_currency: str
    previewed_at: datetime | None
    reserved_quote_id: str
    reserved_until: datetime | None
    reservation_status: str = Field(description="'', ACTIVE, EXPIRED or USED.")


class ChargedOut(Schema):
    """What the upstream charged, from its answer to the initiation."""

    amount: Decimal = Field(description=MONEY)
    currency: str
    fees: FeesOut = Field(description="The fee breakdown charged.")
    total_fees: Decimal | None = Field(description="Fees charged on top of the amount. " + MONEY)
    total: Decimal | None = Field(
        description="amount + total_fees: debited from the account (fiat), or the deposit to "
        "send (crypto: deposit_instructions.amount)."
    )
    total_currency: str = Field(description="The payout's currency (fiat) or the stablecoin.")
    recipient_amount: Decimal | None
    recipient_currency: str
    recorded_at: datetime = Field(description="When PayOps recorded the upstream's answer.")


class ChargeDifferenceOut(Schema):
    figure: str = Field(
        description="amount, total_fees, network_fee, recipient_amount or total (see ChargedOut)."
    )
    label: str = Field(description="The figure's name as the payout page shows it.")
    shown: Decimal | None = Field(description="What the approvers saw; null: nothing was shown.")
    shown_currency: str
    charged: Decimal | None = Field(description="Charged; null: the upstream did not say.")
    charged_currency: str


class DepositInstructionsOut(Schema):
    """Crypto: where and how much stablecoin to send before the address expires."""

    wallet_address: str = Field(description="Single-use deposit address.")
    network: str = Field(description="Blockchain network to send on (e.g. solana, polygon).")
    currency: str = Field(description="The stablecoin to send (USDC or USDT).")
    amount: Decimal = Field(description="Exactly this much: amount + fees. " + MONEY)
    expires_at: datetime = Field(description="After this, do not send funds to the address.")


class PayoutOut(Schema):
    id: int
    status: str
    mode: str = Field(description="fiat or crypto, following the virtual account.")
    maker: str
    virtual_account_id: str
    recipient_id: str
    amount: Decimal
    currency: str
    quote_id: str | None
    reference: str
    memo: str
    internal_notes: str
    client_markup: dict[str, str] | None
    payment_instructions: dict[str, str] | None
    preview: PreviewOut
    charged: ChargedOut | None = Field(
        description="The figures charged, once the upstream accepted the payout; else null."
    )
    charge_differs: bool = Field(
        description="True when a charged figure differs from the one shown to the approvers."
    )
    charge_differences: list[ChargeDifferenceOut] = Field(
        description="Each figure charged otherwise than shown; empty when all agree."
    )
    deposit_instructions: DepositInstructionsOut | None = Field(
        description="Crypto: the deposit that funds the payout, once initiated; else null."
    )
    upstream_id: str | None
    upstream_wait: UpstreamWaitOut | None = Field(
        description="While `submitting`: why the initiation waits to be sent again, and when."
    )
    created_at: datetime
    updated_at: datetime
    submitted_at: datetime | None
    documents: list[DocumentOut]
    timeline: list[TimelineOut]


def document_out(document: PayoutDocument, uploaded_by: str | None = None) -> dict[str, Any]:
    return {
        "id": document.pk,
        "kind": document.kind,
        "file_name": document.file_name,
        "content_type": document.content_type,
        "size": document.size,
        "sha256": document.sha256,
        "uploaded_by": uploaded_by or document.uploaded_by.email,
        "uploaded_at": document.uploaded_at,
    }


def _preview_out(payout: Payout) -> dict[str, Any]:
    return {
        "total_fees": payout.preview_total_fees,
        "fees": payout.preview_fees,
        "currency": payout.currency,
        "total": payout.preview_total,
        "total_currency": payout.total_currency,
        "recipient_amount": payout.preview_recipient_amount,
        "recipient_currency": payout.preview_recipient_currency,
        "previewed_at": payout.previewed_at,
        "reserved_quote_id": payout.preview_quote_id,
        "reserved_until": payout.preview_quote_expires_at,
        "reservation_status": payout.preview_quote_status,
    }


def _cents(value: Decimal | None) -> Decimal | None:
    return None if value is None else value.quantize(CENT, rounding=ROUND_HALF_UP)


def _fees_out(stored: dict[str, Any]) -> dict[str, Any]:
    """The stored breakdown with its money in cents (fractions stay fractions)."""
    fees = Fees.model_validate(stored)

    def markup(part: FeeMarkup | None) -> dict[str, Any] | None:
        if part is None:
            return None
        return {**part.model_dump(), "fixed_fee": _cents(part.fixed_fee)}

    return {
        "base_fees": markup(fees.base_fees),
        "client_markup": markup(fees.client_markup),
        "network_fee": _cents(fees.network_fee),
        "penalty_markup": fees.penalty_markup,
        "total_fees": _cents(fees.total_fees),
    }


def _charged_out(payout: Payout) -> dict[str, Any] | None:
    if payout.charged_at is None or payout.charged_amount is None:
        return None
    return {
        "amount": payout.charged_amount,
        "currency": payout.charged_currency,
        "fees": _fees_out(payout.charged_fees),
        "total_fees": payout.charged_total_fees,
        "total": payout.charged_total,
        "total_currency": payout.charged_total_currency,
        "recipient_amount": payout.charged_recipient_amount,
        "recipient_currency": payout.charged_recipient_currency,
        "recorded_at": payout.charged_at,
    }


def _deposit_out(payout: Payout) -> dict[str, Any] | None:
    if not payout.deposit_instructions:
        return None
    # Stored as the upstream gave it; read through the gateway's model (Decimal, aware time).
    return DepositInstructions.model_validate(payout.deposit_instructions).model_dump()


def payout_out(payout: Payout) -> dict[str, Any]:
    return {
        "id": payout.pk,
        "status": payout.status,
        "mode": payout.mode,
        "maker": payout.maker.email,
        "virtual_account_id": payout.virtual_account.upstream_id,
        "recipient_id": payout.recipient.upstream_id,
        "amount": payout.amount,
        "currency": payout.currency,
        "quote_id": payout.quote.upstream_id if payout.quote else None,
        "reference": payout.reference,
        "memo": payout.memo,
        "internal_notes": payout.internal_notes,
        "client_markup": payout.client_markup,
        "payment_instructions": payout.payment_instructions,
        "preview": _preview_out(payout),
        "charged": _charged_out(payout),
        "charge_differs": payout.charge_differs,
        "charge_differences": payout.charge_differences,
        "deposit_instructions": _deposit_out(payout),
        "upstream_id": payout.upstream_id,
        "upstream_wait": upstream_wait_out(payout),
        "created_at": payout.created_at,
        "updated_at": payout.updated_at,
        "submitted_at": payout.submitted_at,
        "documents": [document_out(d) for d in payout.documents.all()],
        "timeline": [
            {
                "at": c.at,
                "from_status": c.from_status,
                "to_status": c.to_status,
                "source": c.source,
                "by": c.by.email if c.by else None,
                "reason": c.reason,
            }
            for c in payout.status_changes.all()
        ],
    }
