"""Payout services: preview, initiation (fiat debit or crypto deposit address) and reads."""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import F

from emulator import clock
from emulator.database import EMULATOR_DB
from emulator.domain import payout_states as states
from emulator.domain.events import emit_about
from emulator.domain.formats import FieldErrors, iso, money, parse_payout_amount, parse_uuid
from emulator.domain.otp import otp_consume
from emulator.domain.payout_pricing import (
    PayoutPricing,
    as_resource_error,
    payout_quote_request,
    price_payout,
    pricing_from_quote,
)
from emulator.domain.payout_requests import (
    PayoutRequest,
    check_instructions,
    parse_payment_instructions,
)
from emulator.domain.quotations import PREVIEW_SOURCE, quote_create, quote_use
from emulator.domain.recipients import PAYOUT_ACCOUNT_TYPES, recipient_get
from emulator.errors import EmulatorError, resource_error
from emulator.models import ApiClient, OtpCode, Payout, Quote, Recipient, VirtualAccount

PREVIEW_QUOTE_LIFETIME_SECONDS = 900
DEPOSIT_ADDRESS_LIFETIME = timedelta(minutes=60)
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def payout_recipient(*, client: ApiClient, environment: str, recipient_id: Any) -> Recipient:
    recipient = recipient_get(client=client, environment=environment, recipient_id=recipient_id)
    if recipient.account_type not in PAYOUT_ACCOUNT_TYPES:
        raise resource_error(
            400,
            "INVALID_RECIPIENT_TYPE",
            "Payouts go to WIRE or SWIFT recipients",
            [("recipient_id", f"account_type is {recipient.account_type}")],
        )
    return recipient


def check_account_usable(account: VirtualAccount) -> None:
    """interface.md 4.4 rule 4: a US_BANK account that is active."""
    if account.type != "US_BANK":
        raise resource_error(
            400,
            "INVALID_VIRTUAL_ACCOUNT_TYPE",
            "Payouts need a US_BANK virtual account",
            [("virtual_account_id", f"type is {account.type}")],
        )
    if account.status != "active":
        raise resource_error(
            400,
            "VIRTUAL_ACCOUNT_NOT_ACTIVE",
            "The virtual account is not active",
            [("virtual_account_id", f"status is {account.status}")],
        )


def payout_preview(
    *, client: ApiClient, environment: str, account: VirtualAccount, body: dict[str, Any]
) -> dict[str, Any]:
    """
    Fees and recipient amount of a payout, priced exactly as its initiation will be
    (decisions.md 2): a crypto account's preview takes the same `payment_instructions`, so its
    fees include the network fee. `create_quote` reserves that price for 15 minutes, funded in
    the same stablecoin on the same network, so the crypto payout can redeem it.
    """
    errors = FieldErrors()
    amount = parse_payout_amount(body.get("amount"), errors)
    if not body.get("recipient_id"):
        errors.add("recipient_id", "is required")
    create = body.get("create_quote", False)
    if not isinstance(create, bool):
        errors.add("create_quote", "must be true or false")
    stablecoin, network = parse_payment_instructions(body.get("payment_instructions"), errors)
    if stablecoin is not None or body.get("payment_instructions") is None:  # else: refused above
        check_instructions(account, crypto=stablecoin is not None, errors=errors)
    errors.raise_if_any()
    assert amount is not None
    recipient = payout_recipient(
        client=client, environment=environment, recipient_id=body["recipient_id"]
    )
    pricing = price_payout(
        client=client,
        amount=amount,
        recipient=recipient,
        stablecoin=stablecoin,
        network=network,
        markup=None,
        at=clock.now(),
    )
    data: dict[str, Any] = {
        "amount": money(amount),
        "currency": "USD",
        "fees": pricing.fees,
        "total_amount": money(pricing.total_cost),
        "recipient_amount": money(pricing.recipient_amount),
        "recipient_currency": recipient.currency,
    }
    if create:
        quote = _reserve_preview_quote(
            client, environment, recipient, amount, stablecoin=stablecoin, network=network
        )
        data["quote_id"] = str(quote.quote_id)
        data["quote_expires_at"] = iso(quote.expires_at)
    return data


def _reserve_preview_quote(
    client: ApiClient,
    environment: str,
    recipient: Recipient,
    amount: Decimal,
    *,
    stablecoin: str | None,
    network: str | None,
) -> Quote:
    """The preview's price as a 15-minute quote, funded as the payout will be."""
    try:
        return quote_create(
            client=client,
            environment=environment,
            request=payout_quote_request(recipient, amount, stablecoin=stablecoin, network=network),
            lifetime_seconds=PREVIEW_QUOTE_LIFETIME_SECONDS,
            source=PREVIEW_SOURCE,
        )
    except EmulatorError as exc:
        raise as_resource_error(exc) from None


def _wallet_address(network: str) -> str:
    if network == "polygon":
        return "0x" + secrets.token_hex(20)
    if network == "tron":
        return "T" + "".join(secrets.choice(BASE58) for _ in range(33))
    return "".join(secrets.choice(BASE58) for _ in range(44))


def _quote_for_payout(
    request: PayoutRequest, client: ApiClient, environment: str, recipient: Recipient
) -> Quote:
    assert request.quote_id is not None
    quote = quote_use(request.quote_id, client, environment)
    mismatch: list[tuple[str, str]] = []
    if quote.base_currency != (request.stablecoin or "USD"):
        mismatch.append(("quote_id", f"quote is funded in {quote.base_currency}"))
    elif request.crypto and quote.network != request.network:
        # Another network has another network fee: the quote's figures would not be charged.
        mismatch.append(("quote_id", f"quote is funded on {quote.network or 'no network'}"))
    if quote.quote_currency != recipient.currency or quote.account_type != recipient.account_type:
        mismatch.append(("quote_id", "quote is for another currency or rail than the recipient"))
    if quote.amount_in_destination or quote.base_amount != request.amount:
        mismatch.append(("amount", f"must equal the quote's base_amount {quote.base_amount}"))
    if mismatch:
        raise resource_error(400, "QUOTE_MISMATCH", "The quote does not fit this payout", mismatch)
    return quote


def payout_create(
    *,
    client: ApiClient,
    environment: str,
    account_id: uuid.UUID,
    request: PayoutRequest,
    otp: OtpCode | None,
) -> Payout:
    """Creates the payout in one transaction: quote used, OTP consumed, balance debited, events."""
    now = clock.now()
    with transaction.atomic(using=EMULATOR_DB):
        account = VirtualAccount.objects.select_for_update().get(id=account_id)
        check_account_usable(account)
        recipient = payout_recipient(
            client=client, environment=environment, recipient_id=request.recipient_id
        )
        quote = (
            _quote_for_payout(request, client, environment, recipient)
            if request.quote_id is not None
            else None
        )
        pricing = _payout_price(client, request, recipient, quote, now=now)
        payout = _new_payout(client, environment, account, recipient, request, pricing, quote, now)
        if request.crypto:
            _await_deposit(payout, request, pricing, now=now)
        else:
            _debit_account(payout, account, pricing, otp, now=now)
        payout.save()
        emit_about(
            payout,
            "payout.created",
            states.event_data(payout),
        )
    return payout


def _payout_price(
    client: ApiClient,
    request: PayoutRequest,
    recipient: Recipient,
    quote: Quote | None,
    *,
    now: datetime,
) -> PayoutPricing:
    """The quote's figures when the payout redeems one, else today's price."""
    if quote is not None:
        return pricing_from_quote(quote, request.amount)
    return price_payout(
        client=client,
        amount=request.amount,
        recipient=recipient,
        stablecoin=request.stablecoin,
        network=request.network,
        markup=request.client_markup,
        at=now,
    )


def _new_payout(
    client: ApiClient,
    environment: str,
    account: VirtualAccount,
    recipient: Recipient,
    request: PayoutRequest,
    pricing: PayoutPricing,
    quote: Quote | None,
    now: datetime,
) -> Payout:
    """The payout as created (not saved yet), with its outcome plan and first event."""
    return Payout(
        client=client,
        environment=environment,
        virtual_account=account,
        recipient=recipient,
        mode=account.mode,
        status=states.CREATED,
        plan=states.outcome_plan(amount=request.amount, mode=account.mode, environment=environment),
        amount=request.amount,
        currency="USD",
        fees=pricing.fees,
        total_fees=pricing.total_fees,
        recipient_amount=pricing.recipient_amount,
        recipient_currency=recipient.currency,
        quote_id=quote.quote_id if quote else None,
        reference=request.reference,
        payment_method=recipient.account_type,
        uetr=uuid.uuid4() if recipient.account_type == "SWIFT" else None,
        supporting_documents=request.documents,
        client_markup=request.client_markup_raw,
        extra_info=request.extra_info,
        events=[{"status": states.CREATED, "at": iso(now)}],
        created_at=now,
        updated_at=now,
    )


def _await_deposit(
    payout: Payout, request: PayoutRequest, pricing: PayoutPricing, *, now: datetime
) -> None:
    """A crypto payout waits for a deposit of the total cost to a fresh wallet address."""
    assert request.network is not None
    payout.payment_instructions = {"network": request.network, "currency": request.stablecoin}
    payout.deposit_expires_at = now + DEPOSIT_ADDRESS_LIFETIME
    payout.deposit_instructions = {
        "wallet_address": _wallet_address(request.network),
        "network": request.network,
        "currency": request.stablecoin,
        "amount": money(pricing.total_cost),
        "expires_at": iso(payout.deposit_expires_at),
    }


def _debit_account(
    payout: Payout,
    account: VirtualAccount,
    pricing: PayoutPricing,
    otp: OtpCode | None,
    *,
    now: datetime,
) -> None:
    """A fiat payout consumes its OTP and debits amount plus fees, or is refused (422)."""
    if otp is not None:
        otp_consume(otp)
    debited = VirtualAccount.objects.filter(id=account.id, balance__gte=pricing.total_cost).update(
        balance=F("balance") - pricing.total_cost, updated_at=now
    )
    if not debited:
        raise resource_error(
            422,
            "INSUFFICIENT_FUNDS",
            "The available balance does not cover amount plus fees",
            [
                (
                    "amount",
                    f"needs {money(pricing.total_cost)} USD, "
                    f"available {money(account.balance)} USD",
                )
            ],
        )
    payout.debited_amount = pricing.total_cost
    payout.next_step_at = now + states.step_delay()


def payout_created_payload(payout: Payout) -> dict[str, Any]:
    """The 201 body's `data`: note the lowercase status (decisions.md 2)."""
    data: dict[str, Any] = {
        "id": str(payout.payout_id),
        "status": payout.status.lower(),
        "amount": money(payout.amount),
        "currency": payout.currency,
        "fees": payout.fees,
        "recipient_amount": money(payout.recipient_amount),
        "recipient_currency": payout.recipient_currency,
        "quote_id": str(payout.quote_id) if payout.quote_id else None,
    }
    if payout.deposit_instructions:
        data["deposit_instructions"] = payout.deposit_instructions
    return data


def payout_payload(payout: Payout) -> dict[str, Any]:
    """GET /v1/payouts/{id}: a bare object with the UPPERCASE status and its events."""
    data: dict[str, Any] = {
        "payout_id": str(payout.payout_id),
        "status": payout.status,
        "from_amount": money(payout.amount),
        "from_currency": payout.currency,
        "to_amount": money(payout.recipient_amount),
        "to_currency": payout.recipient_currency,
        "fee": money(payout.total_fees),
        "recipient_id": str(payout.recipient_id),
        "virtual_account_id": str(payout.virtual_account_id),
        "quote_id": str(payout.quote_id) if payout.quote_id else None,
        "reference": payout.reference or None,
        "payment_method": payout.payment_method,
        "events": payout.events,
        "created_at": iso(payout.created_at),
        "updated_at": iso(payout.updated_at),
    }
    if payout.uetr:
        data["uetr"] = str(payout.uetr)
    if payout.failure_reason:
        data["failure_reason"] = payout.failure_reason
    if payout.deposit_instructions:
        data["deposit_instructions"] = payout.deposit_instructions
    return data


def payout_for_client(*, client: ApiClient, environment: str, payout_id: str) -> Payout:
    """404 when unknown (or in the other environment), 403 when another client's."""
    key = parse_uuid(payout_id)
    payout = Payout.objects.filter(payout_id=key, environment=environment).first() if key else None
    if payout is None:
        raise resource_error(404, "PAYOUT_NOT_FOUND", "Payout not found")
    if payout.client_id != client.pk:
        raise resource_error(403, "FORBIDDEN", "This payout belongs to another client")
    return payout
