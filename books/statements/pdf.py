"""The statement as a PDF, and the formats it shares with the receipt (`receipt_pdf.py`), in the
house look of the evidence pack (payouts/evidence/report_look.py: its fonts, styles, tables and
numbered pages, reused here).

A statement reads like a bank's: the letterhead, the account block (holder, the account number
masked but its last four digits, routing), the period, a summary box (opening, each kind of
movement, closing), the lines with their running balance, "Page n of m", and a footer with when
it was generated and how it compares with the upstream's balance.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import IO, Any
from xml.sax.saxutils import escape

from django.utils import dateformat
from django.utils.translation import gettext
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.flowables import Flowable

from books.statements.statement import Statement, masked
from console.templatetags.ui import grouped, utc_when, when
from payouts.evidence.report_look import (
    BODY,
    CELL,
    CELL_BOLD,
    CELL_BOLD_RIGHT,
    CELL_RIGHT,
    H2,
    MARGIN,
    MUTED,
    NOTE,
    PAGE_WIDTH,
    RULE,
    SUBTITLE,
    TITLE,
    WIDTH,
    NumberedCanvas,
    facts_table,
    fit,
    fonts_register,
    para,
    paragraph_style,
    ruled_table,
)

GOOD = colors.HexColor("#0b6e4f")
BAD = colors.HexColor("#a61b1b")
BOX_FILL = colors.HexColor("#f5f7fa")
# The lines' heading: not kept with the table (a long table would leave page 1 empty).
H2_LINES = paragraph_style(
    "h2_lines",
    fontName=H2.fontName,
    fontSize=H2.fontSize,
    leading=H2.leading,
    spaceBefore=H2.spaceBefore,
    spaceAfter=H2.spaceAfter,
)
# Room for the footer's text beside "Page n of m".
FOOTER_ROOM = PAGE_WIDTH - 2 * MARGIN - 28 * mm


def footer(text: str) -> str:
    """The footer's text cut to fit beside "Page n of m"."""
    return fit(text, FOOTER_ROOM, 7)


def amount(value: Decimal | None, currency: str = "") -> str:
    """`1,234.56 USD` (es, pt-BR: `1.234,56 USD`), to the cent; an empty cell for nothing."""
    if value is None:
        return ""
    return f"{grouped(value, 2)} {currency}".strip()


def when_utc(value: datetime | None) -> str:
    """`2026-11-23 17:26 UTC` (es, pt-BR: `23/11/2026 17:26 UTC`), as the pages say it."""
    return utc_when(value)


def _day(value: date) -> str:
    """A day of the period as the pages write it (`2026-11-01`; es, pt-BR: `01/11/2026`)."""
    return when(value)


def _long_day(value: date) -> str:
    """`01 Oct 2026`, the month's name in the reader's language (`01 oct 2026`)."""
    return dateformat.format(value, "d M Y")


def rate_text(value: Decimal | None) -> str:
    """A rate as stated, every digit, the reader's decimal separator; empty for none."""
    return "" if value is None else grouped(value)


def document_template(out: IO[bytes], *, title: str, subject: str) -> SimpleDocTemplate:
    """An A4 document in the house margins."""
    return SimpleDocTemplate(
        out,
        pagesize=A4,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN + 4 * mm,
        bottomMargin=MARGIN + 2 * mm,
        title=title,
        author="PayOps",
        subject=subject,
    )


def _summary_box(statement: Statement) -> Table:
    c = statement.currency
    rows = [
        (gettext("Opening balance"), statement.opening, True),
        (gettext("Deposits"), statement.deposits, False),
        (gettext("Payouts"), -statement.payouts, False),
        (gettext("Fees"), -statement.fees, False),
        (gettext("Returns"), statement.returns, False),
        (gettext("Adjustments"), statement.adjustments, False),
        (gettext("Closing balance"), statement.closing, True),
    ]
    data = [
        [
            para(label, CELL_BOLD if bold else CELL),
            para(amount(value, c), CELL_BOLD_RIGHT if bold else CELL_RIGHT),
        ]
        for label, value, bold in rows
    ]
    table = Table(data, colWidths=[0.22 * WIDTH, 0.2 * WIDTH])
    table.setStyle(
        TableStyle(
            [
                ("BOX", (0, 0), (-1, -1), 0.6, MUTED),
                ("BACKGROUND", (0, 0), (-1, -1), BOX_FILL),
                ("LINEBELOW", (0, 0), (-1, 0), 0.3, RULE),
                ("LINEABOVE", (0, -1), (-1, -1), 0.6, MUTED),
                ("TOPPADDING", (0, 0), (-1, -1), 2),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
                ("LEFTPADDING", (0, 0), (-1, -1), 4),
                ("RIGHTPADDING", (0, 0), (-1, -1), 4),
            ]
        )
    )
    return table


def _account_block(statement: Statement) -> Table:
    va = statement.account
    left = facts_table(
        [
            (gettext("Account holder"), statement.holder),
            (gettext("Account number"), masked(va.account_number)),
            (gettext("Routing number"), va.routing_number or "—"),
            (gettext("Currency"), statement.currency),
            (
                gettext("Period"),
                gettext("%(start)s to %(end)s (UTC, whole days)")
                % {"start": _long_day(statement.start), "end": _long_day(statement.end)},
            ),
            (gettext("Environment"), va.environment.name),
        ]
    )
    left._argW = [0.2 * WIDTH, 0.34 * WIDTH]
    outer = Table([[left, _summary_box(statement)]], colWidths=[0.56 * WIDTH, 0.44 * WIDTH])
    outer.setStyle(
        TableStyle(
            [
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LEFTPADDING", (0, 0), (-1, -1), 0),
                ("RIGHTPADDING", (0, 0), (-1, -1), 0),
                ("ALIGN", (1, 0), (1, 0), "RIGHT"),
            ]
        )
    )
    return outer


def _check(statement: Statement) -> Paragraph:
    check = statement.check
    colour = "#0b6e4f" if check.agrees else ("#a61b1b" if check.reading is not None else "#52606d")
    return Paragraph(f'<font color="{colour}"><b>{escape(check.words)}</b></font>', BODY)


def _lines(statement: Statement) -> list[Flowable]:
    c = statement.currency
    if not statement.lines:
        return [para(gettext("No movements in this period."), NOTE)]
    rows: list[list[Any]] = []
    for line in statement.lines:
        detail = line.description or line.kind_text
        if line.recipient_amount is not None and line.kind.value == "payout":
            detail += "\n" + gettext("Recipient gets %(recipient_amount)s at %(rate)s") % {
                "recipient_amount": amount(line.recipient_amount, line.recipient_currency),
                "rate": rate_text(line.rate),
            }
        rows.append(
            [
                when_utc(line.at).removesuffix(" UTC").replace(" ", "\n", 1),
                f"{line.kind_text}\n{detail}",
                line.reference or "—",
                amount(line.money_out or None),
                amount(line.fees or None),
                amount(line.money_in or None),
                amount(line.balance),
            ]
        )
    return [
        Paragraph(gettext("Transactions (amounts in %(c)s)") % {"c": c}, H2_LINES),
        ruled_table(
            [
                gettext("Date (UTC)"),
                gettext("Details"),
                gettext("Reference"),
                gettext("Paid out"),
                gettext("Fees"),
                gettext("Paid in"),
                gettext("Balance"),
            ],
            rows,
            [0.11, 0.33, 0.13, 0.11, 0.08, 0.11, 0.13],
            right=(3, 4, 5, 6),
        ),
        Spacer(1, 3 * mm),
        para(
            gettext(
                "Closing balance %(closing)s = opening %(opening)s + deposits %(deposits)s - "
                "payouts %(payouts)s - fees %(fees)s + returns %(returns)s + adjustments "
                "%(adjustments)s."
            )
            % {
                "closing": amount(statement.closing, c),
                "opening": amount(statement.opening, c),
                "deposits": amount(statement.deposits, c),
                "payouts": amount(statement.payouts, c),
                "fees": amount(statement.fees, c),
                "returns": amount(statement.returns, c),
                "adjustments": amount(statement.adjustments, c),
            },
            NOTE,
        ),
    ]


def statement_pdf_write(statement: Statement, out: IO[bytes]) -> None:
    """Write the statement as a PDF into `out`."""
    fonts_register()
    va = statement.account

    class PageCanvas(NumberedCanvas):
        header_left = gettext("PayOps · Account statement")
        header_right = gettext("%(holder)s · account %(account_number)s · %(start)s to %(end)s") % {
            "holder": statement.holder,
            "account_number": masked(va.account_number),
            "start": _day(statement.start),
            "end": _day(statement.end),
        }
        footer_left = footer(
            gettext("Generated %(generated_at)s · %(check)s")
            % {"generated_at": when_utc(statement.generated_at), "check": statement.check.words}
        )

    document = document_template(
        out,
        title=gettext("Statement %(account_number)s %(start)s to %(end)s")
        % {
            "account_number": masked(va.account_number),
            "start": _day(statement.start),
            "end": _day(statement.end),
        },
        subject=gettext("Account statement"),
    )
    story: list[Flowable] = [
        Paragraph("PayOps", TITLE),
        Paragraph(gettext("Account statement · virtual account held with the upstream"), SUBTITLE),
        _account_block(statement),
        Spacer(1, 3 * mm),
        _check(statement),
        *_lines(statement),
    ]
    document.build(story, canvasmaker=PageCanvas)
