"""Quote services: validate a quotation request, create, read (expiring lazily), re-price, use."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction

from emulator import clock
from emulator.database import EMULATOR_DB
from emulator.domain.corridors import ACCOUNT_TYPES, BASE_CURRENCIES, NETWORKS, QUOTE_CURRENCIES
from emulator.domain.formats import iso
from emulator.domain.pricing import ClientMarkup, Pricing, price
from emulator.errors import quote_error, quote_validation_error
from emulator.models import ApiClient, Quote, QuoteStatus

MAX_AMOUNT = Decimal("999999999.99")


@dataclass(frozen=True)
class QuoteRequest:
    base_currency: str
    quote_currency: str
    amount: Decimal
    amount_in_destination: bool
    account_type: str
    network: str | None


def price_request(
    request: QuoteRequest, *, at: datetime, client_markup: ClientMarkup, fees_on_top: bool = False
) -> Pricing:
    """`price` for a validated request (a quotation's, or the one a payout is priced as)."""
    return price(
        base_currency=request.base_currency,
        quote_currency=request.quote_currency,
        account_type=request.account_type,
        network=request.network,
        amount=request.amount,
        amount_in_destination=request.amount_in_destination,
        at=at,
        client_markup=client_markup,
        fees_on_top=fees_on_top,
    )


def invalid_quote_request(message: str) -> Exception:
    return quote_validation_error(message, valid_quote_currencies=list(QUOTE_CURRENCIES))


def parse_amount(value: Any) -> Decimal:
    """A JSON number (parsed as Decimal), positive, at most MAX_AMOUNT."""
    if value is None:
        raise invalid_quote_request("amount is required")
    if isinstance(value, bool) or not isinstance(value, Decimal | int | float):
        raise invalid_quote_request("amount must be a number")
    amount = Decimal(str(value))
    if not amount.is_finite() or amount <= 0:
        raise invalid_quote_request("amount must be a positive number")
    if amount > MAX_AMOUNT:
        raise invalid_quote_request("amount is too large")
    return amount


def validate_quote_request(body: Any) -> QuoteRequest:
    """interface.md 4.2's rules, with its error shapes and valid_* lists."""
    if not isinstance(body, dict):
        raise invalid_quote_request("request body must be a JSON object")
    base_currency = body.get("base_currency", "USD")
    if base_currency is None:
        base_currency = "USD"
    if base_currency not in BASE_CURRENCIES:
        raise quote_validation_error(
            "invalid base_currency", valid_base_currencies=list(BASE_CURRENCIES)
        )
    quote_currency = body.get("quote_currency")
    if quote_currency is None or quote_currency == "":
        raise invalid_quote_request("quote_currency is required")
    if quote_currency not in ACCOUNT_TYPES:
        raise invalid_quote_request("invalid quote_currency")
    amount = parse_amount(body.get("amount"))
    amount_in_destination = body.get("amount_in_destination", False)
    if amount_in_destination is None:
        amount_in_destination = False
    if not isinstance(amount_in_destination, bool):
        raise invalid_quote_request("amount_in_destination must be a boolean")
    default_type, valid_types = ACCOUNT_TYPES[quote_currency]
    account_type = body.get("account_type") or default_type
    if account_type not in valid_types:
        raise quote_validation_error(
            "invalid account_type for the currency", valid_account_types=list(valid_types)
        )
    default_network, valid_networks = NETWORKS[base_currency]
    network = body.get("network") or default_network
    if network is not None and network not in valid_networks:
        raise quote_validation_error(
            "invalid network for the base currency", valid_networks=list(valid_networks)
        )
    return QuoteRequest(
        base_currency=base_currency,
        quote_currency=quote_currency,
        amount=amount,
        amount_in_destination=amount_in_destination,
        account_type=account_type,
        network=network,
    )


def client_markup_of(client: ApiClient) -> ClientMarkup:
    return ClientMarkup(
        fixed_fee=client.markup_fixed_fee,
        percentage_fee=client.markup_percentage_fee,
        fx_markup=client.markup_fx,
    )


def _apply_pricing(quote: Quote, pricing: Pricing) -> None:
    for field in (
        "base_amount",
        "quote_amount",
        "rate",
        "service_rate",
        "base_fixed_fee",
        "base_percentage_fee",
        "base_fx_markup",
        "client_fixed_fee",
        "client_percentage_fee",
        "client_fx_markup",
        "network_fee",
        "penalty_markup",
        "total_fees",
    ):
        setattr(quote, field, getattr(pricing, field))


# The `source` of a quote reserved by POST .../payout/preview with create_quote.
PREVIEW_SOURCE = "preview"


def quote_create(
    *,
    client: ApiClient,
    environment: str,
    request: QuoteRequest,
    lifetime_seconds: int | None = None,
    client_markup: ClientMarkup | None = None,
    source: str = "quotation",
) -> Quote:
    """Prices and stores an ACTIVE quote expiring `lifetime_seconds` (default 600) from now."""
    lifetime = int(lifetime_seconds or settings.EMULATOR_QUOTE_LIFETIME_SECONDS)
    now = clock.now()
    pricing = price_request(
        request,
        at=now,
        client_markup=client_markup or client_markup_of(client),
        # A quote reserved by a payout preview prices a payout: fees on top of the amount.
        fees_on_top=source == PREVIEW_SOURCE,
    )
    quote = Quote(
        client=client,
        environment=environment,
        base_currency=request.base_currency,
        quote_currency=request.quote_currency,
        account_type=request.account_type,
        network=request.network or "",
        amount_in_destination=request.amount_in_destination,
        requested_amount=request.amount,
        lifetime_seconds=lifetime,
        source=source,
        created_at=now,
        updated_at=now,
        expires_at=now + timedelta(seconds=lifetime),
    )
    _apply_pricing(quote, pricing)
    with transaction.atomic(using=EMULATOR_DB):
        quote.save()
    return quote


def _expire_if_due(quote: Quote, now: datetime) -> Quote:
    if quote.status == QuoteStatus.ACTIVE and now >= quote.expires_at:
        Quote.objects.filter(pk=quote.pk, status=QuoteStatus.ACTIVE).update(
            status=QuoteStatus.EXPIRED, updated_at=now
        )
        quote.status = QuoteStatus.EXPIRED
    return quote


def _not_found() -> Exception:
    return quote_error(404, "QUOTE_NOT_FOUND", "quote not found")


def _find(quote_id: uuid.UUID | str, client: ApiClient, environment: str, lock: bool) -> Quote:
    try:
        key = uuid.UUID(str(quote_id))
    except ValueError:
        raise _not_found() from None
    queryset = Quote.objects.filter(quote_id=key, client=client, environment=environment)
    if lock:
        queryset = queryset.select_for_update()
    quote = queryset.first()
    if quote is None:
        raise _not_found()
    return quote


def quote_get(*, quote_id: uuid.UUID | str, client: ApiClient, environment: str) -> Quote:
    """Another client's or environment's quote is QUOTE_NOT_FOUND."""
    return _expire_if_due(_find(quote_id, client, environment, lock=False), clock.now())


def _invalid_state(quote: Quote) -> Exception:
    return quote_error(
        400, "QUOTE_INVALID_STATE", f"quote is {quote.status}, only an ACTIVE quote can be used"
    )


def _lock_active(
    quote_id: uuid.UUID | str, client: ApiClient, environment: str
) -> tuple[Quote, datetime]:
    """The quote locked for the caller's transaction, and the time it was checked at.

    Raises QUOTE_NOT_FOUND, or QUOTE_INVALID_STATE unless it is ACTIVE and not past its expiry."""
    quote = _find(quote_id, client, environment, lock=True)
    now = clock.now()
    _expire_if_due(quote, now)
    if quote.status != QuoteStatus.ACTIVE:
        raise _invalid_state(quote)
    return quote, now


def quote_update_amount(
    *, quote_id: uuid.UUID | str, client: ApiClient, environment: str, amount: Decimal
) -> Quote:
    """Re-prices an ACTIVE quote for a new amount (same direction) and restarts its timer."""
    with transaction.atomic(using=EMULATOR_DB):
        quote, now = _lock_active(quote_id, client, environment)
        pricing = price(
            base_currency=quote.base_currency,
            quote_currency=quote.quote_currency,
            account_type=quote.account_type,
            network=quote.network or None,
            amount=amount,
            amount_in_destination=quote.amount_in_destination,
            at=now,
            client_markup=ClientMarkup(
                quote.client_fixed_fee, quote.client_percentage_fee, quote.client_fx_markup
            ),
        )
        _apply_pricing(quote, pricing)
        quote.requested_amount = amount
        quote.updated_at = now
        quote.expires_at = now + timedelta(seconds=quote.lifetime_seconds)
        quote.save()
    return quote


def quote_use(quote: Quote | uuid.UUID | str, client: ApiClient, environment: str) -> Quote:
    """Marks an ACTIVE quote of this client USED (call inside the payout's transaction).

    Raises QUOTE_NOT_FOUND (unknown, other client or environment) or QUOTE_INVALID_STATE."""
    quote_id = quote.quote_id if isinstance(quote, Quote) else quote
    with transaction.atomic(using=EMULATOR_DB):
        locked, now = _lock_active(quote_id, client, environment)
        locked.status = QuoteStatus.USED
        locked.used_at = now
        locked.updated_at = now
        locked.save(update_fields=["status", "used_at", "updated_at"])
    return locked


def quote_json(quote: Quote) -> dict[str, Any]:
    """The quote resource of interface.md 2.2 (numbers as JSON numbers)."""
    fees: dict[str, Any] = {
        "base_fees": {
            "fixed_fee": float(quote.base_fixed_fee),
            "percentage_fee": float(quote.base_percentage_fee),
            "fx_markup": float(quote.base_fx_markup),
        },
        "client_markup": {
            "fixed_fee": float(quote.client_fixed_fee),
            "percentage_fee": float(quote.client_percentage_fee),
            "fx_markup": float(quote.client_fx_markup),
        },
        "penalty_markup": float(quote.penalty_markup),
        "total_fees": float(quote.total_fees),
    }
    data: dict[str, Any] = {
        "quote_id": str(quote.quote_id),
        "base_amount": float(quote.base_amount),
        "base_currency": quote.base_currency,
        "quote_amount": float(quote.quote_amount),
        "quote_currency": quote.quote_currency,
        "account_type": quote.account_type,
        "rate": float(quote.rate),
        "service_rate": float(quote.service_rate),
        "expiration_ts": iso(quote.expires_at),
        "status": quote.status,
        "fees": fees,
    }
    if quote.network:
        data["network"] = quote.network
        fees["network_fee"] = float(quote.network_fee)
    return data
