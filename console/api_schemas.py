"""The API's shared schemas that need nothing above the console: the one error shape and a
list's paging. Every router uses them (gateway.api_support re-exports them with the pieces that
need the gateway, such as `?environment=`); the console's own routers (the audit trail) import
them from here, since the console may not import the gateway (ADR 0016)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from ninja import Field, Query, Schema


class FieldErrorOut(Schema):
    field: str = Field(description="The request field at fault, dotted for nested objects.")
    message: str = Field(description="What is wrong with it, in plain words.")


class ErrorOut(Schema):
    """The one error shape of every endpoint, whatever the status."""

    code: str = Field(
        description="Stable machine-readable code, e.g. validation_error, permission_denied, "
        "not_found, unauthorized, end_user_not_verified, upstream_unavailable."
    )
    message: str = Field(description="A sentence for a person.")
    errors: list[FieldErrorOut] = Field(
        default_factory=list, description="Field errors; empty when no single field is at fault."
    )


# Every endpoint may answer these; list them in `response={...}` so the OpenAPI page shows them.
ERROR_RESPONSES: dict[int, type[Schema]] = {
    400: ErrorOut,
    401: ErrorOut,
    403: ErrorOut,
    404: ErrorOut,
    413: ErrorOut,
    503: ErrorOut,
}

# A list's paging: `?page=&page_size=` (answered by `paginate`), or `?limit=&offset=`. Each is
# bounded (400 on the field beyond): a database cannot skip 10^20 rows, and nobody pages that far.
MAX_OFFSET = 1_000_000
MAX_PAGE = MAX_OFFSET // 200
PageNumber = Query(1, ge=1, le=MAX_PAGE, description=f"1 to {MAX_PAGE}.")
PageSize = Query(50, ge=1, le=200)
Limit = Query(50, ge=1, le=200)
Offset = Query(0, ge=0, le=MAX_OFFSET, description=f"0 to {MAX_OFFSET}.")


class PageOut[T](Schema):
    # What `paginate` answers. A list endpoint's page names its rows, `class XPage(PageOut[XOut])`
    # (no docstring: the schema's OpenAPI description would change).
    items: list[T]
    count: int
    page: int
    pages: int


def paginate(rows: QuerySet[Any], *, page: int, page_size: int) -> dict[str, Any]:
    """`{"items", "count", "page", "pages"}`: two queries (count + page) whatever the length."""
    count = rows.count()
    pages = max(1, -(-count // page_size))
    start = (page - 1) * page_size
    return {
        "items": list(rows[start : start + page_size]),
        "count": count,
        "page": page,
        "pages": pages,
    }
