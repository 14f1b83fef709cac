"""A receipt per completed payout: what was sent, to whom, at what rate and fees, who approved.

Only a completed payout has one (409 otherwise: a receipt says the money arrived). The figures
are the ones the upstream charged (`charged_*`), else the preview the approvers saw.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext

from books.statements.fees import PayoutFees, payout_fees
from books.statements.statement import masked, payout_rate
from payouts.models import Approval, Payout, PayoutStatus
from staff import roles
from staff.errors import ServiceError
from staff.models import StaffUser
from users.mirror import require


@dataclass(frozen=True)
class ApprovalLine:
    step: int
    name: str
    email: str
    at: datetime
    second_factor: str


@dataclass(frozen=True)
class Receipt:
    payout: Payout
    uetr: str
    quote_id: str
    amount: Decimal
    currency: str
    fees: PayoutFees
    fee_items: list[tuple[str, Decimal]]
    total_fees: Decimal
    total_debited: Decimal
    recipient_amount: Decimal | None
    recipient_currency: str
    rate: Decimal | None
    recipient_name: str
    recipient_bank: str
    recipient_account: str
    recipient_rail: str
    recipient_country: str
    maker: str
    approvals: list[ApprovalLine]
    completed_at: datetime | None

    @property
    def filename(self) -> str:
        return f"receipt-payout-{self.payout.pk}.pdf"


def _uetr(payload: dict[str, Any]) -> str:
    """The UETR where the upstream gave one (decisions.md 2 "Get payout": `uetr`, SWIFT only)."""
    for key in ("uetr", "UETR"):
        if payload.get(key):
            return str(payload[key])
    nested = payload.get("payout") if isinstance(payload.get("payout"), dict) else None
    return str(nested.get("uetr") or "") if nested else ""


def receipt_build(*, payout: Payout, by: StaffUser | None) -> Receipt:
    """The receipt of a completed payout (ServiceError 409 `not_completed` otherwise)."""
    require(by, roles.BOOKS_VIEW)
    if payout.status != PayoutStatus.COMPLETED:
        raise ServiceError(
            gettext("Only a completed payout has a receipt; this one is %(value)s.")
            % {"value": payout.get_status_display().lower()},
            code="not_completed",
            status=409,
        )
    figures = payout_fees(payout)
    items = [
        (gettext("Fixed fees"), figures.fixed),
        (gettext("Percentage fees"), figures.percentage),
        (gettext("Network fee"), figures.network),
    ]
    if figures.unitemised:
        items.append((gettext("Fees not itemised by the upstream"), figures.unitemised))
    approvals = [
        ApprovalLine(
            step=approval.step + 1,
            name=approval.approver.get_full_name(),
            email=approval.approver.email,
            at=approval.created_at,
            second_factor=approval.second_factor_method,
        )
        for approval in Approval.objects.filter(
            payout=payout, round=payout.approval_round, voided_at__isnull=True
        )
        .select_related("approver")
        .order_by("step", "created_at")
    ]
    completed = (
        payout.status_changes.filter(to_status=PayoutStatus.COMPLETED).order_by("at").first()
    )
    recipient = payout.recipient
    amount = payout.charged_amount or payout.amount
    total_fees = figures.total_fees
    return Receipt(
        payout=payout,
        uetr=_uetr(payout.upstream_payload or {}),
        quote_id=(payout.quote.upstream_id if payout.quote else payout.preview_quote_id) or "",
        amount=amount,
        currency=payout.currency,
        fees=figures,
        fee_items=items,
        total_fees=total_fees,
        total_debited=payout.charged_total or amount + total_fees,
        recipient_amount=payout.charged_recipient_amount or payout.preview_recipient_amount,
        recipient_currency=payout.charged_recipient_currency or payout.preview_recipient_currency,
        rate=payout_rate(payout),
        recipient_name=recipient.display_name if recipient else "—",
        recipient_bank=recipient.bank_name if recipient else "",
        recipient_rail=recipient.account_type if recipient else "",
        recipient_account=masked(recipient.account_number) if recipient else "—",
        recipient_country=recipient.country if recipient else "",
        maker=payout.maker.email,
        approvals=approvals,
        completed_at=completed.at if completed else None,
    )
