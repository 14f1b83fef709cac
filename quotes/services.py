"""Quote writes: request, re-price, re-check with the upstream, and expire what is due."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from gateway.client import call_sync, upstream
from gateway.errors import UpstreamError
from gateway.models import Environment
from gateway.schemas import Quote as UpstreamQuote
from quotes.choices import STABLECOINS, choices_refresh
from quotes.errors import QuoteFieldError, QuoteRefused, quote_errors
from quotes.models import Quote, QuoteStatus
from staff.actions import act, record_action
from staff.models import StaffUser
from staff.roles import PAYOUT_INITIATE

MAX_AMOUNT = Decimal("999999999.99")


def require_maker(user: StaffUser) -> None:
    if not user.has_perm(PAYOUT_INITIATE):
        raise PermissionDenied(gettext("Only finance makers request and re-price quotes."))


CENT = Decimal("0.01")
RATE_STEP = Decimal("0.000001")


def _money(value: Decimal | None) -> Decimal | None:
    """Money as the upstream quantises it (2 decimals): a JSON 6.0 is stored and shown 6.00."""
    return None if value is None else value.quantize(CENT)


def _figures(remote: UpstreamQuote) -> dict[str, Any]:
    fees = remote.fees
    base = fees.base_fees if fees else None
    client = fees.client_markup if fees else None
    return {
        "base_amount": _money(remote.base_amount),
        "quote_amount": _money(remote.quote_amount),
        "rate": remote.rate.quantize(RATE_STEP),
        "service_rate": remote.service_rate.quantize(RATE_STEP),
        "account_type": remote.account_type or "",
        "network": remote.network or "",
        "status": str(remote.status),
        "expires_at": remote.expiration_ts,
        "base_fixed_fee": _money(base.fixed_fee if base else None),
        "base_percentage_fee": base.percentage_fee if base else None,
        "base_fx_markup": base.fx_markup if base else None,
        "client_fixed_fee": _money(client.fixed_fee if client else None),
        "client_percentage_fee": client.percentage_fee if client else None,
        "client_fx_markup": client.fx_markup if client else None,
        "network_fee": _money(fees.network_fee if fees else None),
        "penalty_markup": fees.penalty_markup if fees else None,
        "total_fees": _money(fees.total_fees if fees else None),
        "raw": remote.model_dump(mode="json"),
    }


def _check_request(
    *, base_currency: str, amount: Decimal, network: str, amount_in_destination: bool
) -> None:
    """What we can tell before sending; the upstream's lists decide the rest."""
    errors: list[QuoteFieldError] = []
    if amount <= 0:
        errors.append(QuoteFieldError("amount", gettext("The amount must be greater than 0.")))
    elif amount > MAX_AMOUNT or amount != amount.quantize(Decimal("0.01")):
        errors.append(
            QuoteFieldError("amount", gettext("At most 999,999,999.99, with at most 2 decimals."))
        )
    if base_currency in STABLECOINS and not network:
        errors.append(QuoteFieldError("network", f"{base_currency} needs its network."))
    if base_currency not in STABLECOINS and network:
        errors.append(
            QuoteFieldError("network", gettext("Only a stablecoin source takes a network."))
        )
    if errors:
        raise QuoteRefused(errors)


def _refused(
    exc: UpstreamError, *, environment: Environment, base_currency: str, quote_currency: str
) -> QuoteRefused:
    if exc.details:
        choices_refresh(
            environment=environment,
            details=exc.details,
            base_currency=base_currency,
            quote_currency=quote_currency,
        )
    return QuoteRefused(quote_errors(exc))


def _quote_record(
    *,
    by: StaffUser,
    environment: Environment,
    remote: UpstreamQuote,
    amount: Decimal,
    amount_in_destination: bool,
) -> Quote:
    """Keep the upstream's quotation with who asked for it, and audit the request."""
    now = timezone.now()
    with transaction.atomic():
        quote = Quote.objects.create(
            environment=environment,
            upstream_id=remote.quote_id,
            requested_by=by,
            base_currency=remote.base_currency,
            quote_currency=remote.quote_currency,
            amount_in_destination=amount_in_destination,
            requested_amount=amount,
            created_at=now,
            updated_at=now,
            **_figures(remote),
        )
        record_action(
            announce=False,
            actor=by,
            action="quote.requested",
            target=quote,
            details={
                "quote_id": quote.upstream_id,
                "corridor": quote.corridor,
                "account_type": quote.account_type,
                "network": quote.network,
                "amount": amount,
                "amount_in_destination": amount_in_destination,
                "base_amount": quote.base_amount,
                "quote_amount": quote.quote_amount,
                "expires_at": quote.expires_at,
            },
        )
    return quote


def quote_request(
    *,
    by: StaffUser,
    environment: Environment,
    base_currency: str,
    quote_currency: str,
    amount: Decimal,
    amount_in_destination: bool = False,
    account_type: str = "",
    network: str = "",
) -> Quote:
    """Ask the upstream for a quotation and keep it with who asked; refusals come back by field."""
    require_maker(by)
    _check_request(
        base_currency=base_currency,
        amount=amount,
        network=network,
        amount_in_destination=amount_in_destination,
    )
    try:
        remote = call_sync(
            upstream(environment).quotations.create,
            quote_currency=quote_currency,
            amount=amount,
            base_currency=base_currency,
            amount_in_destination=amount_in_destination,
            account_type=account_type or None,
            network=network or None,
        )
    except UpstreamError as exc:
        raise _refused(
            exc,
            environment=environment,
            base_currency=base_currency,
            quote_currency=quote_currency,
        ) from exc
    return _quote_record(
        by=by,
        environment=environment,
        remote=remote,
        amount=amount,
        amount_in_destination=amount_in_destination,
    )


def _mark_expired(quote: Quote) -> None:
    Quote.objects.filter(pk=quote.pk, status=QuoteStatus.ACTIVE).update(
        status=QuoteStatus.EXPIRED, updated_at=timezone.now()
    )
    quote.status = QuoteStatus.EXPIRED


def _require_usable(quote: Quote) -> None:
    """Refused locally (nothing is sent) once the quote is no longer active by our clock."""
    if quote.is_usable():
        return
    if quote.status == QuoteStatus.ACTIVE:
        _mark_expired(quote)
    raise QuoteRefused(
        [
            QuoteFieldError(
                None,
                gettext("The quote is %(value)s: request a new one.")
                % {"value": quote.get_status_display().lower()},
                code="QUOTE_INVALID_STATE",
            )
        ]
    )


def _quote_update_upstream(quote: Quote, *, amount: Decimal) -> UpstreamQuote:
    """The upstream's re-priced quotation, or QuoteRefused (and marked expired if it says so)."""
    try:
        return call_sync(
            upstream(quote.environment).quotations.update, quote.upstream_id, amount=amount
        )
    except UpstreamError as exc:
        if exc.code == "QUOTE_INVALID_STATE":
            _mark_expired(quote)  # the upstream's clock says so, whatever ours says
        raise _refused(
            exc,
            environment=quote.environment,
            base_currency=quote.base_currency,
            quote_currency=quote.quote_currency,
        ) from exc


def _amounts(quote: Quote, *, amount: Decimal) -> dict[str, Any]:
    """The figures a re-price changes, as its audit entry records them before and after."""
    return {
        "amount": amount,
        "base_amount": quote.base_amount,
        "quote_amount": quote.quote_amount,
        "expires_at": quote.expires_at,
    }


def quote_reprice(*, by: StaffUser, quote: Quote, amount: Decimal) -> Quote:
    """Change an active quote's amount: the upstream re-prices it and restarts its timer."""
    require_maker(by)
    _require_usable(quote)
    _check_request(
        base_currency=quote.base_currency,
        amount=amount,
        network=quote.network,
        amount_in_destination=quote.amount_in_destination,
    )
    remote = _quote_update_upstream(quote, amount=amount)
    # A quote has no page of its own that listens: its payouts' pages re-read it.
    with act(actor=by, action="quote.repriced", target=quote, announce=False) as action:
        locked = action.target
        before = _amounts(locked, amount=locked.requested_amount)
        for name, value in _figures(remote).items():
            setattr(locked, name, value)
        locked.requested_amount = amount
        locked.repriced_count += 1
        locked.updated_at = timezone.now()
        locked.save()
        action.details.update(
            quote_id=locked.upstream_id, before=before, after=_amounts(locked, amount=amount)
        )
    return locked


def quote_recheck(*, by: StaffUser, quote: Quote) -> Quote:
    """Read the quote back from the upstream (its status by its own clock) and store it."""
    require_maker(by)
    try:
        remote = call_sync(upstream(quote.environment).quotations.get, quote.upstream_id)
    except UpstreamError as exc:
        raise QuoteRefused(quote_errors(exc)) from exc
    with act(actor=by, action="quote.status_changed", target=quote, announce=False) as action:
        locked = action.target
        previous = locked.status
        for name, value in _figures(remote).items():
            setattr(locked, name, value)
        locked.updated_at = timezone.now()
        locked.save()
        if previous == locked.status:
            action.nothing_changed()
        action.details.update(
            {"quote_id": locked.upstream_id, "from": previous, "to": locked.status}
        )
    return locked


def quotes_expire_due(*, now: Any = None) -> int:
    """Housekeeping: ACTIVE quotes past their upstream expiry become EXPIRED. Safe to run twice."""
    moment = now or timezone.now()
    with transaction.atomic():
        count = Quote.objects.filter(status=QuoteStatus.ACTIVE, expires_at__lte=moment).update(
            status=QuoteStatus.EXPIRED, updated_at=moment
        )
        if count:
            record_action(
                actor=None, action="quotes.expired", details={"count": count}, announce=False
            )
    return count
