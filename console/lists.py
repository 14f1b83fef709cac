"""List pages, shared by every app: filters applied only when given, a filter bar's menu of makers,
a search over several fields (word by word, or an amount), one page of rows with the other query
parameters kept, and the HTMX results partial (or any page's fragment)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django import forms
from django.core.paginator import Page, Paginator
from django.db.models import Model, Q, QuerySet
from django.http import HttpRequest

from staff.models import StaffUser

PAGE_SIZE = 25


def filter_given[M: Model](rows: QuerySet[M], **lookups: Any) -> QuerySet[M]:
    """`rows` filtered by each lookup that has a value; an empty filter ("", None) means "any"."""
    given = {lookup: value for lookup, value in lookups.items() if value}
    return rows.filter(**given) if given else rows


def search[M: Model](rows: QuerySet[M], text: str, *lookups: str) -> QuerySet[M]:
    """Rows where any of `lookups` (e.g. "email__icontains") matches the stripped `text`."""
    term = text.strip()
    if not term:
        return rows
    match = Q()
    for lookup in lookups:
        match |= Q(**{lookup: term})
    return rows.filter(match)


def words_match(text: str, *lookups: str) -> Q:
    """Every word of `text` matches at least one of `lookups` (e.g. "last_name__icontains"): "Ana
    Silva" finds the row whose first name is Ana and last name Silva. Empty text: every row."""
    match = Q()
    for word in text.split():
        either = Q()
        for lookup in lookups:
            either |= Q(**{lookup: word})
        match &= either
    return match


# A figure as a person types or copies it: 539, 539.5, 539.00, 1,234.56, "1,234.56 USD".
_AMOUNT = re.compile(
    r"(?P<units>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<cents>\d{1,2}))?(?:\s*(?P<currency>[A-Za-z]{3,4}))?",
    re.ASCII,
)


@dataclass(frozen=True)
class SearchedAmount:
    value: Decimal
    currency: str  # upper case; "" when the term names no currency


def amount_searched(text: str) -> SearchedAmount | None:
    """The amount a search term names, exactly (a Decimal, never a float: "539" and "539.00" are
    the same amount), or None when the term is not an amount (more than two decimals included:
    no stored amount has them)."""
    found = _AMOUNT.fullmatch(text.strip())
    if found is None:
        return None
    units = found["units"].replace(",", "")
    value = Decimal(f"{units}.{found['cents'] or '0'}")
    return SearchedAmount(value, (found["currency"] or "").upper())


def query_without_page(request: HttpRequest) -> str:
    """The request's query string without `page` (for includes/pagination.html's links)."""
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


def page_of(request: HttpRequest, rows: Any, per_page: int = PAGE_SIZE) -> tuple[Page, str]:
    """The page asked for, and the query string without `page` (for includes/pagination.html)."""
    page = Paginator(rows, per_page).get_page(request.GET.get("page"))
    return page, query_without_page(request)


def filters_by_maker[F: forms.Form](
    request: HttpRequest, form_class: Callable[..., F], makers: Iterable[StaffUser], **choices: Any
) -> tuple[F, dict[str, Any], StaffUser | None]:
    """A filter bar with a menu of `makers`: the bound form, its values (none when invalid) and
    the maker chosen (None: any). `choices` are the form's other menus."""
    makers = list(makers)
    form = form_class(request.GET or None, makers=[(str(m.pk), m.email) for m in makers], **choices)
    filters = form.cleaned_data if form.is_valid() else {}
    maker = next((m for m in makers if str(m.pk) == filters.get("maker")), None)
    return form, filters, maker


def is_htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


def fragment_template(request: HttpRequest, template: str, fragment: str) -> str:
    """The whole page, or only its `fragment` partial when HTMX asks for a swap."""
    return f"{template}#{fragment}" if is_htmx(request) else template


def list_template(request: HttpRequest, template: str) -> str:
    """The whole page, or only its `results` partial when HTMX asks (a filter bar's request)."""
    return fragment_template(request, template, "results")
