"""CSV exports: the one writer every export uses, safe to open in a spreadsheet.

A cell whose text starts with `=`, `+`, `-`, `@`, a tab or a carriage return is read by Excel,
LibreOffice and Google Sheets as a formula, so a draft reference such as `=HYPERLINK(...)` would
come out as a live link, or worse (OWASP "CSV Injection"). `csv_cell` prefixes such text with a
single quote, which spreadsheets show as the text itself; the csv module quotes separators,
quotes and line breaks, so a formula cannot start in the middle of a cell either.

Every text cell is neutralised, a leading `-` included (OWASP: prefix them all). Numbers are
written as numbers only when passed as numbers (int, Decimal, float), which no one but our own
code produces: a payments export has no negative amounts today (amounts and fees are positive),
and a future signed column passes its Decimal, not a string that happens to look like one.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from decimal import Decimal

from django.http import StreamingHttpResponse

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

type Cell = str | int | float | Decimal | None


def csv_cell(value: Cell) -> str | int | float | Decimal:
    """The value as written to a CSV cell: text that a spreadsheet would run is made inert."""
    if type(value) is str:  # most cells: the same rule as below, without the other checks
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float, Decimal)):
        return value
    text = str(value)
    if text.startswith(FORMULA_STARTS):
        return "'" + text
    return text


class _Buffer:
    """csv.writer target that gathers lines until a chunk is worth sending."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0

    def write(self, value: str) -> None:
        self.parts.append(value)
        self.size += len(value)

    def take(self) -> str:
        text = "".join(self.parts)
        self.parts.clear()
        self.size = 0
        return text


# A streamed chunk holds whole lines, about this many characters: few enough writes to the
# socket, little enough memory whatever the number of rows.
CHUNK_CHARS = 64 * 1024
# The media type of every export (the API documents it with this name, never the literal).
CSV_MEDIA_TYPE = "text/csv"


def csv_lines(header: Iterable[str], rows: Iterable[Iterable[Cell]]) -> Iterator[str]:
    """The header and every row as CSV text, in chunks of whole lines (about CHUNK_CHARS), every
    cell through `csv_cell`."""
    buffer = _Buffer()
    writer = csv.writer(buffer)
    writer.writerow([csv_cell(name) for name in header])
    for row in rows:
        writer.writerow([csv_cell(value) for value in row])
        if buffer.size >= CHUNK_CHARS:
            yield buffer.take()
    yield buffer.take()


def csv_response(
    header: Iterable[str], rows: Iterable[Iterable[Cell]], *, filename: str
) -> StreamingHttpResponse:
    """A streamed CSV download (a large export never sits in memory)."""
    response = StreamingHttpResponse(csv_lines(header, rows), content_type=CSV_MEDIA_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
