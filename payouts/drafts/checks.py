"""What a draft must satisfy to be saved, then to go for approval: each problem said exactly."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from payouts.models import (
    INTERNAL_NOTES_MAX,
    MEMO_MAX,
    REFERENCE_MAX,
    Payout,
    PayoutMode,
    ReservationStatus,
)
from payouts.states import IN_FLIGHT
from quotes.choices import STABLECOINS, Choices
from quotes.models import Quote

MAX_AMOUNT = Decimal("999999.99")  # interface.md 8: payout amount
CENT = Decimal("0.01")
PAYOUT_RAILS = ("WIRE", "SWIFT")  # interface.md 4.4 rule 5


def add_problem(errors: dict[str, list[str]], name: str, message: str) -> None:
    errors.setdefault(name, []).append(message)


def _check_amount(amount: Decimal, errors: dict[str, list[str]]) -> None:
    if amount <= 0:
        add_problem(errors, "amount", "The amount must be greater than 0.")
    elif amount > MAX_AMOUNT:
        add_problem(errors, "amount", "The amount is at most 999,999.99.")
    elif amount != amount.quantize(CENT):
        add_problem(errors, "amount", "The amount has at most 2 decimals.")


def _check_quote(quote: Quote, payout: Payout, errors: dict[str, list[str]], now: datetime) -> None:
    """The quote must be usable and fit the payout as the upstream will require (QUOTE_MISMATCH)."""
    if quote.environment_id != payout.environment_id:
        add_problem(errors, "quote", "The quote belongs to another environment.")
        return
    if not quote.is_usable(now):
        add_problem(errors, "quote", "The quote has expired or was used: request a new one.")
    source = payout.payment_currency if payout.mode == PayoutMode.CRYPTO else "USD"
    if quote.base_currency != (source or "USD"):
        add_problem(
            errors,
            "quote",
            f"The quote is funded in {quote.base_currency}, the payout in {source or 'USD'}.",
        )
    elif payout.mode == PayoutMode.CRYPTO and quote.network != payout.payment_network:
        # Another network has another network fee: the quote's figures would not be charged.
        add_problem(
            errors,
            "quote",
            f"The quote is funded on {quote.network or 'no network'}, "
            f"the payout on {payout.payment_network}.",
        )
    rail = payout.recipient.account_type if payout.recipient_id else ""
    if quote.quote_currency != "USD" or (rail and quote.account_type != rail):
        add_problem(
            errors,
            "quote",
            f"The quote is for {quote.quote_currency} on {quote.account_type}; "
            f"the recipient is paid in USD on {rail or '?'}.",
        )
    if quote.amount_in_destination:
        add_problem(errors, "quote", "A quote priced by the amount to arrive cannot fund a payout.")
    if payout.amount != quote.base_amount:
        add_problem(
            errors,
            "amount",
            f"With this quote the amount must be {quote.base_amount} (the quote's source amount).",
        )


def _check_parties(payout: Payout, errors: dict[str, list[str]]) -> None:
    """The account pays and the recipient receives: both of this environment, both usable."""
    account = payout.virtual_account
    if account.environment_id != payout.environment_id:
        add_problem(
            errors, "virtual_account", "The virtual account belongs to another environment."
        )
    elif account.status != "active" or not account.upstream_id:
        add_problem(
            errors, "virtual_account", f"The virtual account is {account.status}, not active."
        )
    recipient = payout.recipient
    if recipient.environment_id != payout.environment_id:
        add_problem(errors, "recipient", "The recipient belongs to another environment.")
    elif not recipient.upstream_id:
        add_problem(errors, "recipient", "The recipient is not registered with the upstream yet.")
    elif recipient.account_type not in PAYOUT_RAILS:
        add_problem(errors, "recipient", "Payouts go to WIRE or SWIFT recipients only.")


def _check_instructions(payout: Payout, errors: dict[str, list[str]]) -> None:
    """A crypto payout names its stablecoin and network; a fiat one names neither."""
    if payout.mode == PayoutMode.CRYPTO:
        choices = Choices(payout.environment)
        if payout.payment_currency not in STABLECOINS:
            add_problem(
                errors,
                "payment_currency",
                f"A crypto payout names its stablecoin: {', '.join(STABLECOINS)}.",
            )
        else:
            networks = choices.networks(payout.payment_currency)
            if payout.payment_network not in networks:
                add_problem(
                    errors,
                    "payment_network",
                    f"{payout.payment_currency} networks: {', '.join(networks)}.",
                )
    elif payout.payment_currency or payout.payment_network:
        add_problem(
            errors,
            "payment_currency",
            "A fiat virtual account takes no payment instructions (stablecoin, network).",
        )


def draft_problems(payout: Payout, *, now: datetime) -> dict[str, list[str]]:
    """Every rule a draft must satisfy to be saved (submission adds the money checks)."""
    errors: dict[str, list[str]] = {}
    _check_parties(payout, errors)
    _check_amount(payout.amount, errors)
    if len(payout.reference) > REFERENCE_MAX:
        add_problem(errors, "reference", f"At most {REFERENCE_MAX} characters.")
    if len(payout.memo) > MEMO_MAX:
        add_problem(errors, "memo", f"At most {MEMO_MAX} characters.")
    if len(payout.internal_notes) > INTERNAL_NOTES_MAX:
        add_problem(errors, "internal_notes", f"At most {INTERNAL_NOTES_MAX} characters.")
    _check_instructions(payout, errors)
    if payout.quote_id is not None:
        assert payout.quote is not None
        _check_quote(payout.quote, payout, errors, now)
        if payout.client_markup is not None:
            add_problem(
                errors, "client_markup", "A quote fixes the fees: no client markup with it."
            )
    for name in ("percentage_fee", "fx_markup"):
        value = getattr(payout, f"client_markup_{name}")
        if value is not None and not (Decimal(0) <= value < 1):
            add_problem(
                errors, "client_markup", f"{name} is a fraction between 0 and 1 (0.01 is 1 %)."
            )
    if payout.client_markup_fixed_fee is not None and payout.client_markup_fixed_fee < 0:
        add_problem(errors, "client_markup", "fixed_fee cannot be negative.")
    return errors


def submission_problems(payout: Payout, *, now: datetime) -> dict[str, list[str]]:
    """Everything that stops a draft from going for approval, each said exactly."""
    errors = draft_problems(payout, now=now)
    account = payout.virtual_account
    fees = payout.quote.total_fees if payout.quote is not None else payout.preview_total_fees
    if payout.quote is None and payout.previewed_at is None:
        add_problem(errors, "preview", "Preview the payout so its fees are known.")
    if (
        payout.preview_quote_status == ReservationStatus.ACTIVE
        and (payout.preview_quote_expires_at is None or payout.preview_quote_expires_at <= now)
    ) or payout.preview_quote_status == ReservationStatus.EXPIRED:
        add_problem(errors, "preview", "The reserved preview quote has expired: preview again.")
    if payout.mode == PayoutMode.FIAT and fees is not None and "virtual_account" not in errors:
        needed = payout.amount + fees
        balance = account.available_balance
        if balance is None:
            add_problem(
                errors, "virtual_account", "The account's balance is not known yet: refresh it."
            )
        elif balance < needed:
            as_of = (
                f" as of {account.balance_as_of:%Y-%m-%d %H:%M} UTC"
                if account.balance_as_of
                else ""
            )
            add_problem(
                errors,
                "virtual_account",
                f"The balance{as_of} is {balance} {account.currency}; the payout needs "
                f"{needed} {payout.currency} (amount {payout.amount} plus fees {fees}).",
            )
    if payout.mode == PayoutMode.CRYPTO and not payout.documents.exists():
        add_problem(errors, "documents", "A crypto payout needs at least one supporting document.")
    return errors


def identical_in_flight(payout: Payout) -> list[Payout]:
    return list(
        Payout.objects.filter(
            environment_id=payout.environment_id,
            virtual_account_id=payout.virtual_account_id,
            recipient_id=payout.recipient_id,
            amount=payout.amount,
            status__in=IN_FLIGHT,
        ).exclude(pk=payout.pk)
    )
