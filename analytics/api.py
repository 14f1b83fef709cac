"""/api/v1/analytics/{figure}: one figure of the analytics as JSON (its table: header and rows;
its chart: labels and series), or `format=csv` its table as a formula-safe CSV; the same builders
as the page (analytics.figures). books.view_books (`@needs`)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any, Literal

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.translation import gettext
from ninja import Field, Query, Router, Schema

from analytics.figures import FIGURES, figure_build
from analytics.selectors import Period
from books.statements.api import CSV_RESPONSES, End, Start
from books.statements.forms import period_checked
from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES
from console.exports import csv_response
from gateway.api_support import EnvironmentName, acting_staff, api_environment
from staff import roles
from staff.errors import ServiceError

router = Router(tags=["analytics"])


class SeriesOut(Schema):
    label: str
    data: list[Decimal | float | int | str | None]


class ChartOut(Schema):
    type: str
    stacked: bool = False
    labels: list[str]
    series: list[SeriesOut]


class FigureOut(Schema):
    figure: str
    title: str
    start: date
    end: date
    environment: str
    header: list[str]
    rows: list[list[Decimal | int | float | str]] = Field(
        description="The table's rows, in the header's order (money as strings)."
    )
    chart: ChartOut


@router.get(
    "/{figure}",
    response={200: FigureOut, **ERROR_RESPONSES},
    openapi_extra={"responses": CSV_RESPONSES},
)
@needs(roles.BOOKS_VIEW)
def get_figure(
    request: HttpRequest,
    figure: str,
    start: date | None = Start,
    end: date | None = End,
    format: Literal["json", "csv"] = Query("json", description="json or csv."),
    environment: str | None = EnvironmentName,
) -> FigureOut | HttpResponseBase:
    """One figure over the period (docs/analytics.md says how each is derived)."""
    if figure not in FIGURES:
        raise ServiceError(
            gettext("No figure is named %(figure)r; one of: %(value)s.")
            % {"figure": figure, "value": ", ".join(FIGURES)},
            code="unknown_figure",
            errors=[("figure", gettext("unknown"))],
            status=404,
        )
    first, last = period_checked(start, end)
    env = api_environment(request, environment)
    built: dict[str, Any] = figure_build(
        figure, period=Period(first, last, env), by=acting_staff(request)
    )
    if format == "csv":
        return csv_response(
            built["header"],
            iter(built["rows"]),
            filename=f"analytics-{figure}-{first:%Y%m%d}-{last:%Y%m%d}.csv",
        )
    return FigureOut(
        figure=figure,
        title=built["title"],
        start=first,
        end=last,
        environment=env.name,
        header=built["header"],
        rows=built["rows"],
        chart=ChartOut(
            type=built["chart"]["type"],
            stacked=built["chart"].get("stacked", False),
            labels=built["chart"]["labels"],
            series=[SeriesOut(**s) for s in built["chart"]["series"]],
        ),
    )
