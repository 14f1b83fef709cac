"""The analytics page (/analytics/): every figure as a chart, a table and a CSV, for
books.view_books (finance makers, approvers, the auditor)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from django.contrib.auth.decorators import login_required, permission_required
from django.http import HttpRequest, HttpResponseNotFound
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils.translation import gettext

from analytics import selectors
from analytics.figures import FIGURES, figure_build, headlines
from analytics.forms import AnalyticsForm
from books.statements.forms import month_to_date
from console.exports import Cell, csv_response
from gateway.selectors import environment_choices
from staff.requests import staff_of
from staff.roles import BOOKS_VIEW


def _rows(rows: Iterable[list[Cell]]) -> Iterator[list[Cell]]:
    yield from rows


@login_required
@permission_required(BOOKS_VIEW, raise_exception=True)
def overview(request: HttpRequest) -> HttpResponseBase:
    """GET /analytics/: the figures; ?figure=<name>&format=csv downloads one figure's table."""
    user = staff_of(request)
    environments = {str(e.pk): e for e in environment_choices(user=request.user)}
    first, last = month_to_date()
    form = AnalyticsForm(
        request.GET or None,
        environments=[(k, e.name) for k, e in environments.items()],
        initial={"start": first, "end": last},
    )
    cleaned = form.cleaned_data if form.is_bound and form.is_valid() else {}
    period = selectors.Period(
        start=cleaned.get("start") or first,
        end=cleaned.get("end") or last,
        environment=environments.get(cleaned.get("environment") or ""),
    )
    if request.GET.get("format") == "csv":
        name = request.GET.get("figure", "")
        if name not in FIGURES:
            return HttpResponseNotFound(gettext("No such figure."))
        figure = figure_build(name, period=period, by=user)
        return csv_response(
            figure["header"],
            _rows(figure["rows"]),
            filename=f"analytics-{name}-{period.start:%Y%m%d}-{period.end:%Y%m%d}.csv",
        )
    query = request.GET.copy()
    query.pop("format", None)
    query.pop("figure", None)
    figures = [figure_build(name, period=period, by=user) for name in FIGURES]
    context = {
        "form": form,
        "period": period,
        "figures": figures,
        "headlines": headlines(figures),
        "query": query.urlencode(),
    }
    return render(request, "analytics/overview.html", context)
