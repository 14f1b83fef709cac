"""What a draft must satisfy to be saved, then to go for approval: each problem said exactly."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.utils.translation import gettext

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
        add_problem(errors, "amount", gettext("The amount must be greater than 0."))
    elif amount > MAX_AMOUNT:
        add_problem(errors, "amount", gettext("The amount is at most 999,999.99."))
    elif amount != amount.quantize(CENT):
        add_problem(errors, "amount", gettext("The amount has at most 2 decimals."))


def _check_quote(quote: Quote, payout: Payout, errors: dict[str, list[str]], now: datetime) -> None:
    """The quote must be usable and fit the payout as the upstream will require (QUOTE_MISMATCH)."""
    if quote.environment_id != payout.environment_id:
        add_problem(errors, "quote", gettext("The quote belongs to another environment."))
        return
    if not quote.is_usable(now):
        add_problem(
            errors, "quote", gettext("The quote has expired or was used: request a new one.")
        )
    source = payout.payment_currency if payout.mode == PayoutMode.CRYPTO else "USD"
    if quote.base_currency != (source or "USD"):
        add_problem(
            errors,
            "quote",
            gettext("The quote is funded in %(base_currency)s, the payout in %(value)s.")
            % {"base_currency": quote.base_currency, "value": source or "USD"},
        )
    elif payout.mode == PayoutMode.CRYPTO and quote.network != payout.payment_network:
        # Another network has another network fee: the quote's figures would not be charged.
        add_problem(
            errors,
            "quote",
            gettext("The quote is funded on %(value)s, the payout on %(payment_network)s.")
            % {"value": quote.network or "no network", "payment_network": payout.payment_network},
        )
    rail = payout.recipient.account_type if payout.recipient_id else ""
    if quote.quote_currency != "USD" or (rail and quote.account_type != rail):
        add_problem(
            errors,
            "quote",
            gettext(
                "The quote is for %(quote_currency)s on %(account_type)s; the recipient is paid "
                "in USD on %(value)s."
            )
            % {
                "quote_currency": quote.quote_currency,
                "account_type": quote.account_type,
                "value": rail or "?",
            },
        )
    if quote.amount_in_destination:
        add_problem(
            errors, "quote", gettext("A quote priced by the amount to arrive cannot fund a payout.")
        )
    if payout.amount != quote.base_amount:
        add_problem(
            errors,
            "amount",
            gettext(
                "With this quote the amount must be %(base_amount)s (the quote's source amount)."
            )
            % {"base_amount": quote.base_amount},
        )


def _check_parties(payout: Payout, errors: dict[str, list[str]]) -> None:
    """The account pays and the recipient receives: both of this environment, both usable."""
    account = payout.virtual_account
    if account.environment_id != payout.environment_id:
        add_problem(
            errors,
            "virtual_account",
            gettext("The virtual account belongs to another environment."),
        )
    elif account.status != "active" or not account.upstream_id:
        add_problem(
            errors,
            "virtual_account",
            gettext("The virtual account is %(status)s, not active.") % {"status": account.status},
        )
    recipient = payout.recipient
    if recipient.environment_id != payout.environment_id:
        add_problem(errors, "recipient", gettext("The recipient belongs to another environment."))
    elif not recipient.upstream_id:
        add_problem(
            errors, "recipient", gettext("The recipient is not registered with the upstream yet.")
        )
    elif recipient.account_type not in PAYOUT_RAILS:
        add_problem(errors, "recipient", gettext("Payouts go to WIRE or SWIFT recipients only."))


def _check_instructions(payout: Payout, errors: dict[str, list[str]]) -> None:
    """A crypto payout names its stablecoin and network; a fiat one names neither."""
    if payout.mode == PayoutMode.CRYPTO:
        choices = Choices(payout.environment)
        if payout.payment_currency not in STABLECOINS:
            add_problem(
                errors,
                "payment_currency",
                gettext("A crypto payout names its stablecoin: %(value)s.")
                % {"value": ", ".join(STABLECOINS)},
            )
        else:
            networks = choices.networks(payout.payment_currency)
            if payout.payment_network not in networks:
                add_problem(
                    errors,
                    "payment_network",
                    gettext("%(payment_currency)s networks: %(value)s.")
                    % {"payment_currency": payout.payment_currency, "value": ", ".join(networks)},
                )
    elif payout.payment_currency or payout.payment_network:
        add_problem(
            errors,
            "payment_currency",
            gettext("A fiat virtual account takes no payment instructions (stablecoin, network)."),
        )


def draft_problems(payout: Payout, *, now: datetime) -> dict[str, list[str]]:
    """Every rule a draft must satisfy to be saved (submission adds the money checks)."""
    errors: dict[str, list[str]] = {}
    _check_parties(payout, errors)
    _check_amount(payout.amount, errors)
    if len(payout.reference) > REFERENCE_MAX:
        add_problem(
            errors,
            "reference",
            gettext("At most %(REFERENCE_MAX)s characters.") % {"REFERENCE_MAX": REFERENCE_MAX},
        )
    if len(payout.memo) > MEMO_MAX:
        add_problem(
            errors, "memo", gettext("At most %(MEMO_MAX)s characters.") % {"MEMO_MAX": MEMO_MAX}
        )
    if len(payout.internal_notes) > INTERNAL_NOTES_MAX:
        add_problem(
            errors,
            "internal_notes",
            gettext("At most %(INTERNAL_NOTES_MAX)s characters.")
            % {"INTERNAL_NOTES_MAX": INTERNAL_NOTES_MAX},
        )
    _check_instructions(payout, errors)
    if payout.quote_id is not None:
        assert payout.quote is not None
        _check_quote(payout.quote, payout, errors, now)
        if payout.client_markup is not None:
            add_problem(
                errors,
                "client_markup",
                gettext("A quote fixes the fees: no client markup with it."),
            )
    for name in ("percentage_fee", "fx_markup"):
        value = getattr(payout, f"client_markup_{name}")
        if value is not None and not (Decimal(0) <= value < 1):
            add_problem(
                errors,
                "client_markup",
                gettext("%(name)s is a fraction between 0 and 1 (0.01 is 1 %%).") % {"name": name},
            )
    if payout.client_markup_fixed_fee is not None and payout.client_markup_fixed_fee < 0:
        add_problem(errors, "client_markup", gettext("fixed_fee cannot be negative."))
    return errors


def submission_problems(payout: Payout, *, now: datetime) -> dict[str, list[str]]:
    """Everything that stops a draft from going for approval, each said exactly."""
    errors = draft_problems(payout, now=now)
    account = payout.virtual_account
    fees = payout.quote.total_fees if payout.quote is not None else payout.preview_total_fees
    if payout.quote is None and payout.previewed_at is None:
        add_problem(errors, "preview", gettext("Preview the payout so its fees are known."))
    if (
        payout.preview_quote_status == ReservationStatus.ACTIVE
        and (payout.preview_quote_expires_at is None or payout.preview_quote_expires_at <= now)
    ) or payout.preview_quote_status == ReservationStatus.EXPIRED:
        add_problem(
            errors, "preview", gettext("The reserved preview quote has expired: preview again.")
        )
    if payout.mode == PayoutMode.FIAT and fees is not None and "virtual_account" not in errors:
        needed = payout.amount + fees
        balance = account.available_balance
        if balance is None:
            add_problem(
                errors,
                "virtual_account",
                gettext("The account's balance is not known yet: refresh it."),
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
                gettext(
                    "The balance%(as_of)s is %(balance)s %(currency)s; the payout needs "
                    "%(needed)s %(currency2)s (amount %(amount)s plus fees %(fees)s)."
                )
                % {
                    "as_of": as_of,
                    "balance": balance,
                    "currency": account.currency,
                    "needed": needed,
                    "currency2": payout.currency,
                    "amount": payout.amount,
                    "fees": fees,
                },
            )
    if payout.mode == PayoutMode.CRYPTO and not payout.documents.exists():
        add_problem(
            errors, "documents", gettext("A crypto payout needs at least one supporting document.")
        )
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
