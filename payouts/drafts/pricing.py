"""A payout's figures: the preview PayOps shows, priced exactly as the initiation will be, and
what the upstream then charged, compared figure by figure (decisions.md 2 "Payout pricing")."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext_noop

from console.sentences import Summary
from gateway.client import call_sync, upstream
from gateway.schemas import Fees, PayoutCreated, PayoutPreview
from payouts.approval import notifications
from payouts.models import NotificationKind, Payout, PayoutMode
from staff.actions import record_action

logger = logging.getLogger("payouts")

# The figures compared on initiation, with the label a person reads.
FIGURES = {
    "amount": "Amount",
    "total_fees": "Total fees",
    "network_fee": "Network fee",
    "recipient_amount": "Recipient gets",
    "total": "Total (debit, or deposit to send)",
}


def preview_upstream(payout: Payout, *, reserve: bool) -> PayoutPreview:
    """The upstream's preview of this payout, with the same `payment_instructions` as its
    initiation: in crypto mode the fees then include the network fee, and a reserved quote is
    funded in the stablecoin on the network the payout will name (so it fits the payout)."""
    return call_sync(
        upstream(payout.environment).payouts.preview,
        virtual_account_id=payout.virtual_account.upstream_id,
        amount=payout.amount,
        recipient_id=payout.recipient.upstream_id,
        create_quote=reserve,
        payment_instructions=payout.payment_instructions,
    )


def fees_json(fees: Fees | Decimal | None) -> dict[str, Any]:
    """The fee breakdown as stored on the payout (strings for money: exact in JSON)."""
    if isinstance(fees, Fees):
        return fees.model_dump(mode="json", exclude_none=True)
    return {} if fees is None else {"total_fees": str(fees)}


@dataclass(frozen=True)
class Figures:
    """One side of the comparison: what was shown, or what was charged."""

    amount: Decimal | None
    currency: str
    total_fees: Decimal | None
    network_fee: Decimal | None
    recipient_amount: Decimal | None
    recipient_currency: str
    total: Decimal | None
    total_currency: str

    def currency_of(self, figure: str) -> str:
        if figure == "recipient_amount":
            return self.recipient_currency
        return self.total_currency if figure == "total" else self.currency


def _decimal(value: Any) -> Decimal | None:
    return None if value is None or value == "" else Decimal(str(value))


def shown_figures(payout: Payout) -> Figures:
    """What the maker and the approvers saw: the reserved quote's fees when the payout uses one
    of the quotes app, else the last preview (whose reserved quote, if any, fixes the same)."""
    quote = payout.quote
    if quote is not None:
        total_fees = quote.total_fees
        network_fee = quote.network_fee if quote.network else None
    else:
        total_fees = payout.preview_total_fees
        network_fee = _decimal(payout.preview_fees.get("network_fee"))
    return Figures(
        amount=payout.amount,
        currency=payout.currency,
        total_fees=total_fees,
        network_fee=network_fee,
        recipient_amount=payout.preview_recipient_amount,
        recipient_currency=payout.preview_recipient_currency,
        total=None if total_fees is None else payout.amount + total_fees,
        total_currency=payout.total_currency,
    )


def charged_figures(payout: Payout, created: PayoutCreated) -> Figures:
    """What the initiation's 201 says was charged. Crypto: the deposit instructions' amount is
    the total; fiat: amount + fees is what the account is debited (decisions.md 2)."""
    fees = created.fees
    total_fees = fees.total_fees if isinstance(fees, Fees) else fees
    total: Decimal | None = None
    total_currency = payout.total_currency
    if payout.mode == PayoutMode.CRYPTO:
        if created.deposit_instructions is not None:
            total = created.deposit_instructions.amount
            total_currency = created.deposit_instructions.currency
    elif total_fees is not None:
        total = created.amount + total_fees
        total_currency = created.currency
    return Figures(
        amount=created.amount,
        currency=created.currency,
        total_fees=total_fees,
        network_fee=fees.network_fee if isinstance(fees, Fees) else None,
        recipient_amount=created.recipient_amount,
        recipient_currency=created.recipient_currency or "",
        total=total,
        total_currency=total_currency,
    )


def _text(value: Decimal | None) -> str | None:
    return None if value is None else f"{value:.2f}"


def charge_differences(shown: Figures, charged: Figures) -> list[dict[str, str | None]]:
    """
    Every figure charged otherwise than shown (value or currency), pure. A network fee that was
    not shown counts as 0 shown. A recipient amount that was never shown promises nothing. A
    figure shown but not stated by the upstream is a difference too: it cannot be checked.
    """
    differences: list[dict[str, str | None]] = []
    for figure, label in FIGURES.items():
        seen, paid = getattr(shown, figure), getattr(charged, figure)
        if figure == "network_fee":
            seen, paid = seen or Decimal(0), paid or Decimal(0)
        if seen is None and (paid is None or figure == "recipient_amount"):
            continue
        seen_in, paid_in = shown.currency_of(figure), charged.currency_of(figure)
        if seen == paid and (seen_in == paid_in or seen is None):
            continue
        differences.append(
            {
                "figure": figure,
                "label": label,
                "shown": _text(seen),
                "shown_currency": seen_in,
                "charged": _text(paid),
                "charged_currency": paid_in,
            }
        )
    return differences


def _sentence(difference: dict[str, str | None]) -> str:
    shown = f"{difference['shown']} {difference['shown_currency']}"
    charged = f"{difference['charged']} {difference['charged_currency']}"
    if difference["shown"] is None:
        shown = "nothing"
    if difference["charged"] is None:
        charged = "nothing stated"
    return f"{difference['label']}: shown {shown}, charged {charged}"


def charge_record(*, payout: Payout, created: PayoutCreated, at: datetime) -> None:
    """
    Put the charged figures on the (locked) payout, the caller saves it in its transaction.
    A difference from what was shown is flagged on the payout, audited, logged and told to
    the maker and the approvers: it is never accepted silently.
    """
    charged = charged_figures(payout, created)
    differences = charge_differences(shown_figures(payout), charged)
    payout.charged_amount = charged.amount
    payout.charged_currency = charged.currency
    payout.charged_fees = fees_json(created.fees)
    payout.charged_total_fees = charged.total_fees
    payout.charged_recipient_amount = charged.recipient_amount
    payout.charged_recipient_currency = charged.recipient_currency
    payout.charged_total = charged.total
    payout.charged_total_currency = charged.total_currency
    payout.charged_at = at
    payout.charge_differs = bool(differences)
    payout.charge_differences = differences
    if not differences:
        return
    summary = "; ".join(_sentence(d) for d in differences)
    logger.warning("payout %s charged otherwise than shown: %s", payout.pk, summary)
    record_action(
        actor=None,
        action="payout.charge_differs",
        target=payout,
        details={"upstream_id": created.id, "differences": differences},
    )
    notifications.notify(
        payout=payout,
        kind=NotificationKind.CHARGE_DIFFERS,
        people=notifications.people_of(payout),
        # The differences are read on the payout's page, in the reader's language; the English
        # record (`message`, shown in English) keeps them too.
        message=Summary(
            gettext_noop("Payout %(id)s was charged otherwise than shown: see its page."),
            {"id": payout.pk},
            record=f"Payout {payout.pk} was charged otherwise than shown. {summary}.",
        ),
    )
