"""Quote endpoints (/api/v1/quotes): the same services and permissions as the pages."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.utils.translation import gettext
from ninja import Field, Router, Schema
from ninja.params.functions import Query as QueryParam

from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES, ErrorOut, Limit, Offset
from console.inputs import Amount, Text
from gateway.api_support import EnvironmentName, api_environment
from gateway.models import Environment
from quotes import selectors
from quotes.models import Quote
from quotes.services import quote_reprice, quote_request
from staff import roles
from staff.requests import staff_of

router = Router(tags=["quotes"])


def environment_of(request: HttpRequest, name: str | None = None) -> Environment:
    """`?environment=NAME`, or the caller's current environment (400 when there is none)."""
    return api_environment(request, name)


class QuoteIn(Schema):
    base_currency: Text = Field("USD", description="Source currency: USD, USDC or USDT.")
    quote_currency: Text = Field(
        description="Destination currency (one of valid_quote_currencies)."
    )
    amount: Amount = Field(description="Positive, up to 2 decimals; ASCII digits and a dot.")
    amount_in_destination: bool = Field(
        False, description="True: `amount` is what the recipient gets; the source is solved."
    )
    account_type: Text = Field("", description="Payment rail; blank for the currency's default.")
    network: Text = Field("", description="Stablecoin network; required for USDC and USDT.")


class QuoteAmountIn(Schema):
    amount: Amount = Field(description="New amount, in the quote's own amount mode.")


class FeesOut(Schema):
    base_fixed_fee: Decimal | None
    base_percentage_fee: Decimal | None = Field(description="Fraction: 0.005 is 0.5 %.")
    base_fx_markup: Decimal | None
    client_fixed_fee: Decimal | None
    client_percentage_fee: Decimal | None
    client_fx_markup: Decimal | None
    network_fee: Decimal | None
    penalty_markup: Decimal | None
    total_fees: Decimal | None
    currency: str = Field(description="Currency of the money fees (the source currency).")


class CheckOut(Schema):
    name: str
    stated: Decimal | None
    recomputed: Decimal
    difference: Decimal | None = Field(description="stated - recomputed.")
    tolerance: Decimal = Field(description="The largest difference that is only rounding.")
    currency: str = Field(description="The currency of a money figure; empty for a rate.")
    agrees: bool
    explanation: str = Field(description="Why a difference within the tolerance is expected.")


class ArithmeticOut(Schema):
    agrees: bool = Field(description="Every figure agrees within its stated tolerance.")
    exact: bool = Field(description="Every figure agrees exactly (no difference to explain).")
    checks: list[CheckOut]
    unchecked: list[str]


class QuoteOut(Schema):
    id: int
    quote_id: str = Field(description="The upstream's quote id.")
    status: str = Field(description="ACTIVE, EXPIRED or USED.")
    usable: bool = Field(description="ACTIVE and before its expiry: may be used or re-priced.")
    base_currency: str
    quote_currency: str
    account_type: str
    network: str
    amount_in_destination: bool
    requested_amount: Decimal
    requested_currency: str = Field(
        description="The destination currency when amount_in_destination, else the source's."
    )
    base_amount: Decimal
    quote_amount: Decimal
    rate: Decimal
    service_rate: Decimal
    fees: FeesOut
    expires_at: datetime = Field(description="The upstream's expiration_ts.")
    requested_by: str
    created_at: datetime
    repriced_count: int
    arithmetic: ArithmeticOut


def quote_out(quote: Quote) -> dict[str, Any]:
    check = selectors.quote_check(quote)
    return {
        "id": quote.pk,
        "quote_id": quote.upstream_id,
        "status": quote.status,
        "usable": quote.is_usable(),
        "base_currency": quote.base_currency,
        "quote_currency": quote.quote_currency,
        "account_type": quote.account_type,
        "network": quote.network,
        "amount_in_destination": quote.amount_in_destination,
        "requested_amount": quote.requested_amount,
        "requested_currency": quote.requested_currency,
        "base_amount": quote.base_amount,
        "quote_amount": quote.quote_amount,
        "rate": quote.rate,
        "service_rate": quote.service_rate,
        "fees": {
            "base_fixed_fee": quote.base_fixed_fee,
            "base_percentage_fee": quote.base_percentage_fee,
            "base_fx_markup": quote.base_fx_markup,
            "client_fixed_fee": quote.client_fixed_fee,
            "client_percentage_fee": quote.client_percentage_fee,
            "client_fx_markup": quote.client_fx_markup,
            "network_fee": quote.network_fee,
            "penalty_markup": quote.penalty_markup,
            "total_fees": quote.total_fees,
            "currency": quote.base_currency,
        },
        "expires_at": quote.expires_at,
        "requested_by": quote.requested_by.email,
        "created_at": quote.created_at,
        "repriced_count": quote.repriced_count,
        "arithmetic": {
            "agrees": check.agrees,
            "exact": check.exact,
            "checks": [
                {
                    "name": item.name,
                    "stated": item.stated,
                    "recomputed": item.expected,
                    "difference": item.difference,
                    "tolerance": item.tolerance,
                    "currency": item.currency,
                    "agrees": item.agrees,
                    "explanation": str(item.why),
                }
                for item in check.checks
            ],
            "unchecked": list(check.unchecked),
        },
    }


ERRORS: dict[int, Any] = {**ERROR_RESPONSES, 409: ErrorOut, 502: ErrorOut}


@router.post("/quotes", response={201: QuoteOut, **ERRORS})
@needs(roles.PAYOUT_INITIATE)
def create_quote(
    request: HttpRequest, payload: QuoteIn, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """Request a quotation from the upstream in the caller's environment (finance makers)."""
    quote = quote_request(
        by=staff_of(request), environment=environment_of(request, environment), **payload.dict()
    )
    return 201, quote_out(quote)


def _require_reader(request: HttpRequest) -> None:
    if not selectors.can_read_quotes(staff_of(request)):
        raise PermissionDenied(gettext("Not allowed."))


QuoteCorridor = QueryParam("", description="BASE-DEST, e.g. USD-MXN.")


@router.get("/quotes", response={200: list[QuoteOut], **ERROR_RESPONSES})
@needs(roles.FINANCE_VIEW)
def list_quotes(
    request: HttpRequest,
    status: str = "",
    corridor: Text = QuoteCorridor,
    limit: int = Limit,
    offset: int = Offset,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """The environment's quotes, newest first."""
    _require_reader(request)
    quotes = selectors.quote_list(
        environment=environment_of(request, environment), status=status, corridor=corridor
    )
    return 200, [quote_out(quote) for quote in quotes[offset : offset + limit]]


def _find(request: HttpRequest, quote_id: int, environment: str | None) -> Quote:
    try:
        return selectors.quote_detail(environment=environment_of(request, environment), pk=quote_id)
    except Quote.DoesNotExist:
        raise Http404("No such quote in this environment.") from None


@router.get("/quotes/{quote_id}", response={200: QuoteOut, **ERROR_RESPONSES})
@needs(roles.FINANCE_VIEW)
def get_quote(
    request: HttpRequest, quote_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    _require_reader(request)
    return 200, quote_out(_find(request, quote_id, environment))


@router.patch("/quotes/{quote_id}", response={200: QuoteOut, **ERRORS})
@needs(roles.PAYOUT_INITIATE)
def change_quote_amount(
    request: HttpRequest,
    quote_id: int,
    payload: QuoteAmountIn,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Change an active quote's amount: the upstream re-prices it and restarts its timer."""
    quote = _find(request, quote_id, environment)
    quote = quote_reprice(by=staff_of(request), quote=quote, amount=payload.amount)
    return 200, quote_out(quote)
