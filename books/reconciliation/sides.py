"""Both sides of a payout, worded alike for matching, and the account a recipient pays from."""

from __future__ import annotations

from accounts.models import Recipient, VirtualAccount
from books.reconciliation import matching
from gateway.models import Environment
from gateway.schemas import Payout as UpstreamPayout
from payouts.models import Payout


def our_side(payout: Payout) -> matching.Side:
    """PayOps's record as the upstream would word it: charged figures first, else previewed."""
    amount = payout.charged_amount if payout.charged_amount is not None else payout.amount
    fee = (
        payout.charged_total_fees
        if payout.charged_total_fees is not None
        else payout.preview_total_fees
    )
    to_amount = (
        payout.charged_recipient_amount
        if payout.charged_recipient_amount is not None
        else payout.preview_recipient_amount
    )
    return matching.Side(
        upstream_id=str(payout.upstream_id),
        status=matching.upstream_word(str(payout.status)),
        amount=amount,
        fee=fee,
        to_amount=to_amount,
        currency=payout.currency,
        to_currency=payout.charged_recipient_currency or payout.preview_recipient_currency,
    )


def their_side(record: UpstreamPayout) -> matching.Side:
    return matching.Side(
        upstream_id=record.payout_id,
        status=str(record.status).upper(),
        amount=record.from_amount,
        fee=record.fee,
        to_amount=record.to_amount,
        currency=record.from_currency or "USD",
        to_currency=record.to_currency or "",
    )


def account_of_recipient(environment: Environment, recipient_id: str | None) -> Recipient | None:
    """The upstream's payout names no virtual account (decisions.md 2): its recipient does."""
    if not recipient_id:
        return None
    return (
        Recipient.objects.filter(environment=environment, upstream_id=recipient_id)
        .select_related("end_user")
        .first()
    )


def fiat_account_of(recipient: Recipient | None, currency: str) -> VirtualAccount | None:
    if recipient is None:
        return None
    accounts = list(
        VirtualAccount.objects.filter(end_user=recipient.end_user, mode="fiat")
        .exclude(upstream_id=None)
        .order_by("pk")
    )
    # The account in the payout's currency first, then the oldest.
    accounts.sort(key=lambda va: va.currency != currency)
    return accounts[0] if accounts else None
