"""The evidence report's house look: its fonts, paragraph styles, how it writes times, money and
rates, its ruled tables and label / value lines, and the pages numbered "Page n of N" with the
payout in the header. The statements and receipts (books/statements/pdf.py) reuse it.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import reportlab
from django.utils.translation import gettext
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Paragraph, Table, TableStyle
from reportlab.platypus.flowables import Flowable

from console.templatetags.ui import grouped, utc_when

FONT = "PayOpsVera"
FONT_BOLD = "PayOpsVera-Bold"
MONO = "Courier"
PAGE_WIDTH, PAGE_HEIGHT = A4
MARGIN = 16 * mm
FRAME_PADDING = 6  # platypus frames' own padding, each side
WIDTH = PAGE_WIDTH - 2 * MARGIN - 2 * FRAME_PADDING
INK = colors.HexColor("#1f2933")
MUTED = colors.HexColor("#52606d")
RULE = colors.HexColor("#cbd2d9")
HEAD_FILL = colors.HexColor("#e4e7eb")


def fonts_register() -> None:
    """Register the Vera fonts reportlab ships (once), so no system font is needed."""
    if FONT in pdfmetrics.getRegisteredFontNames():
        return
    folder = Path(reportlab.__file__).parent / "fonts"
    pdfmetrics.registerFont(TTFont(FONT, str(folder / "Vera.ttf")))
    pdfmetrics.registerFont(TTFont(FONT_BOLD, str(folder / "VeraBd.ttf")))
    pdfmetrics.registerFontFamily(FONT, normal=FONT, bold=FONT_BOLD)


def paragraph_style(name: str, **values: Any) -> ParagraphStyle:
    base: dict[str, Any] = {"fontName": FONT, "fontSize": 8.5, "leading": 11, "textColor": INK}
    return ParagraphStyle(name, **{**base, **values})


TITLE = paragraph_style("title", fontName=FONT_BOLD, fontSize=17, leading=21, spaceAfter=2)
SUBTITLE = paragraph_style("subtitle", fontSize=9.5, leading=13, textColor=MUTED, spaceAfter=8)
H2 = paragraph_style(
    "h2",
    fontName=FONT_BOLD,
    fontSize=11.5,
    leading=15,
    spaceBefore=10,
    spaceAfter=4,
    keepWithNext=1,
)
H3 = paragraph_style(
    "h3", fontName=FONT_BOLD, fontSize=9, leading=12, spaceBefore=4, spaceAfter=2, keepWithNext=1
)
BODY = paragraph_style("body")
NOTE = paragraph_style("note", fontSize=7.5, leading=9.5, textColor=MUTED, spaceBefore=3)
NOTE_INTRO = paragraph_style(
    "note_intro", fontSize=7.5, leading=9.5, textColor=MUTED, keepWithNext=1
)
CELL = paragraph_style("cell", fontSize=7.8, leading=9.6)
CELL_BOLD = paragraph_style("cell_bold", fontName=FONT_BOLD, fontSize=7.8, leading=9.6)
CELL_BOLD_RIGHT = paragraph_style(
    "cell_bold_right", fontName=FONT_BOLD, fontSize=7.8, leading=9.6, alignment=TA_RIGHT
)
CELL_RIGHT = paragraph_style("cell_right", fontSize=7.8, leading=9.6, alignment=TA_RIGHT)
CELL_MONO = paragraph_style("cell_mono", fontName=MONO, fontSize=6.8, leading=8.4)
CODE = paragraph_style("code", fontName=MONO, fontSize=6.5, leading=8, textColor=INK)


def when(value: str) -> str:
    """An ISO time as `2026-11-26 10:30:12 UTC` (es, pt-BR: `26/11/2026 10:30:12 UTC`): the
    pack's times are UTC, written as the pages write them in the reader's language."""
    if not value:
        return "—"
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return value
    return utc_when(at, "seconds")


def money(amount: str, currency: str = "") -> str:
    """`1,234.56 USD` (es, pt-BR: `1.234,56 USD`): every digit kept (never rounded), grouped,
    with its currency."""
    if amount in ("", None):
        return "—"
    try:
        value = Decimal(str(amount))
        if value.as_tuple().exponent > -2:  # type: ignore[operator]
            value = value.quantize(Decimal("0.01"))  # 15.0 → 15.00: digits added, none lost
        text = grouped(value)
    except InvalidOperation:
        text = str(amount)
    return f"{text} {currency}".strip()


def rate(value: object) -> str:
    """An exchange rate or a fee rate as stated, digits kept, the reader's decimal separator."""
    try:
        return grouped(Decimal(str(value)))
    except InvalidOperation:
        return str(value)


def fit(text: str, width: float, size: float) -> str:
    """`text` cut (with "…") to fit `width` points in the body font at `size`."""
    if pdfmetrics.stringWidth(text, FONT, size) <= width:
        return text
    while text and pdfmetrics.stringWidth(text + "…", FONT, size) > width:
        text = text[:-1]
    return text + "…"


def para(text: object, style: ParagraphStyle = CELL) -> Paragraph:
    """A cell or line of text, escaped, its newlines kept."""
    # Courier is a standard font: keep to Latin-1 there; Vera covers the rest we write.
    raw = str(text if text not in (None, "") else "—")
    if style.fontName == MONO:
        raw = raw.encode("latin-1", "replace").decode("latin-1")
    return Paragraph(escape(raw).replace("\n", "<br/>"), style)


def ruled_table(
    header: list[str],
    rows: list[list[Any]],
    widths: list[float],
    *,
    right: tuple[int, ...] = (),
) -> Table:
    """A ruled table: bold header row repeated on each page, cells wrapping, `right` columns
    right-aligned (money, counts)."""
    data: list[list[Any]] = [
        [para(h, CELL_BOLD_RIGHT if i in right else CELL_BOLD) for i, h in enumerate(header)]
    ]
    for row in rows:
        data.append(
            [
                cell
                if isinstance(cell, Flowable)
                else para(cell, CELL_RIGHT if i in right else CELL)
                for i, cell in enumerate(row)
            ]
        )
    table = Table(data, colWidths=[w * WIDTH for w in widths], repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, 0), HEAD_FILL),
                ("LINEBELOW", (0, 0), (-1, 0), 0.6, MUTED),
                ("LINEBELOW", (0, 1), (-1, -1), 0.3, RULE),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 2.5),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2.5),
                ("LEFTPADDING", (0, 0), (-1, -1), 3),
                ("RIGHTPADDING", (0, 0), (-1, -1), 3),
            ]
        )
    )
    return table


def facts_table(pairs: list[tuple[str, Any]], *, right: bool = False) -> Table:
    """Label / value lines (the summary, the release), values right-aligned for money."""
    data = [
        [para(label, CELL_BOLD), para(value, CELL_RIGHT if right else CELL)]
        for label, value in pairs
    ]
    table = Table(data, colWidths=[0.28 * WIDTH, 0.72 * WIDTH if not right else 0.3 * WIDTH])
    table.hAlign = "LEFT"
    table.setStyle(
        TableStyle(
            [
                ("LINEBELOW", (0, 0), (-1, -1), 0.3, RULE),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 2),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
                ("LEFTPADDING", (0, 0), (-1, -1), 3),
            ]
        )
    )
    return table


def none_note(text: str) -> Paragraph:
    """A section's "nothing here" line."""
    return para(text, NOTE)


class NumberedCanvas(Canvas):
    """Draws each page's header and footer once the page count is known ("Page 2 of 5")."""

    header_left = ""
    header_right = ""
    footer_left = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pages: list[dict[str, Any]] = []

    def showPage(self) -> None:
        self._pages.append(dict(self.__dict__))
        self._startPage()

    def save(self) -> None:
        total = len(self._pages)
        for state in self._pages:
            self.__dict__.update(state)
            self._decorate(total)
            super().showPage()
        super().save()

    def _decorate(self, total: int) -> None:
        self.saveState()
        self.setStrokeColor(RULE)
        self.setLineWidth(0.5)
        top = PAGE_HEIGHT - MARGIN + 5 * mm
        self.line(MARGIN, top - 2 * mm, PAGE_WIDTH - MARGIN, top - 2 * mm)
        self.line(MARGIN, MARGIN - 4 * mm, PAGE_WIDTH - MARGIN, MARGIN - 4 * mm)
        self.setFillColor(MUTED)
        self.setFont(FONT_BOLD, 8)
        self.drawString(MARGIN, top, self.header_left)
        self.setFont(FONT, 8)
        room = PAGE_WIDTH - 2 * MARGIN - pdfmetrics.stringWidth(self.header_left, FONT_BOLD, 8)
        self.drawRightString(PAGE_WIDTH - MARGIN, top, fit(self.header_right, room - 6 * mm, 8))
        self.setFont(FONT, 7)
        self.drawString(MARGIN, MARGIN - 8 * mm, self.footer_left)
        self.drawRightString(
            PAGE_WIDTH - MARGIN,
            MARGIN - 8 * mm,
            gettext("Page %(pageNumber)s of %(total)s")
            % {"pageNumber": self._pageNumber, "total": total},
        )
        self.restoreState()
