"""List pages, shared by every app: filters applied only when given, a search over several fields,
one page of rows with the other query parameters kept, and the HTMX results partial."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Model, Q, QuerySet
from django.http import HttpRequest

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


def page_of(request: HttpRequest, rows: Any, per_page: int = PAGE_SIZE) -> tuple[Page, str]:
    """The page asked for, and the query string without `page` (for includes/pagination.html)."""
    page = Paginator(rows, per_page).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return page, query.urlencode()


def is_htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


def list_template(request: HttpRequest, template: str) -> str:
    """The whole page, or only its `results` partial when HTMX asks (a filter bar's request)."""
    return f"{template}#results" if is_htmx(request) else template
