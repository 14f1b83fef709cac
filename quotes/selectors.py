"""Quote reads: the filtered list (constant queries a page), one quote with its payouts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from datetime import date

from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.utils.translation import gettext

from console.lists import filter_given
from gateway.models import Environment
from quotes.arithmetic import QuoteFigures, Recomputation, recompute
from quotes.models import Quote
from staff.models import StaffUser
from staff.roles import FINANCE_VIEW


def can_read_quotes(user: StaffUser) -> bool:
    """Quotes are finance's working material: finance staff read them."""
    return bool(user.has_perm(FINANCE_VIEW))


def require_quote_reader(user: StaffUser) -> None:
    if not can_read_quotes(user):
        raise PermissionDenied(gettext("Only finance staff read quotes."))


def quote_list(
    *,
    environment: Environment | None,
    status: str = "",
    corridor: str = "",
    maker: StaffUser | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
) -> QuerySet[Quote]:
    """Quotes of one environment, newest first, with who asked (the index `quote_env_created`
    serves this order). How many payouts used each is counted for the page shown only:
    `quote_payout_counts`."""
    quotes = Quote.objects.select_related("requested_by")
    quotes = quotes.filter(environment=environment) if environment else quotes.none()
    quotes = filter_given(
        quotes,
        status=status,
        requested_by=maker,
        created_at__date__gte=date_from,
        created_at__date__lte=date_to,
    )
    if corridor and "-" in corridor:
        base, _, destination = corridor.partition("-")
        quotes = quotes.filter(base_currency=base, quote_currency=destination)
    return quotes.order_by("-created_at", "-pk")


def quote_payout_counts(quotes: Iterable[Quote]) -> None:
    """Set `payout_count` on each of `quotes` (a page of the list): one query over these quotes
    only, never a count over every quote of the environment."""
    shown = list(quotes)
    counts = dict(
        Quote.objects.filter(pk__in=[quote.pk for quote in shown])
        .annotate(used=Count("payouts"))
        .values_list("pk", "used")
    )
    for quote in shown:
        quote.payout_count = counts.get(quote.pk, 0)  # type: ignore[attr-defined]


def quote_detail(*, environment: Environment | None, pk: int) -> Quote:
    """One quote of the environment, with the payouts that used it (404 outside it)."""
    return (
        Quote.objects.select_related("requested_by", "environment")
        # The reverse relation, one query a level: quotes import no payouts code.
        .prefetch_related("payouts__maker", "payouts__recipient")
        .get(pk=pk, environment=environment)
    )


def quote_figures(quote: Quote) -> QuoteFigures:
    """The stored quote's numbers: each figure of QuoteFigures is the quote's field of that name."""
    return QuoteFigures(
        **{figure.name: getattr(quote, figure.name) for figure in fields(QuoteFigures)}
    )


def quote_check(quote: Quote) -> Recomputation:
    """PayOps' own recomputation of the quote's figures (quotes.arithmetic)."""
    return recompute(quote_figures(quote))


def corridors(environment: Environment | None) -> list[tuple[str, str]]:
    """The corridors quoted so far in the environment, for the list's filter."""
    if environment is None:
        return []
    pairs = (
        Quote.objects.filter(environment=environment)
        .values_list("base_currency", "quote_currency")
        .distinct()
        .order_by("base_currency", "quote_currency")
    )
    return [(f"{base}-{dest}", f"{base}→{dest}") for base, dest in pairs]


def makers(environment: Environment | None) -> QuerySet[StaffUser]:
    return StaffUser.objects.filter(quotes__environment=environment).distinct().order_by("email")
