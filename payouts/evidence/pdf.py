"""The evidence pack's report, laid out for a person reading it at a bank: a title block, one
numbered section a stage of the payout's life, tables with money right-aligned and its currency,
the payout on every page's header, the page number and when it was generated in every footer.

Built with reportlab's platypus from the facts `facts.evidence_facts` gathered (the same ones
evidence.json holds), with the Vera fonts reportlab ships (no system font needed).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import IO, Any
from xml.sax.saxutils import escape

import reportlab
from django.utils.translation import gettext, ngettext
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    Paragraph,
    SimpleDocTemplate,
    Table,
    TableStyle,
)
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
# Upstream bodies are shown up to this many characters; evidence.json holds them whole.
BODY_SHOWN = 900


def _fonts() -> None:
    if FONT in pdfmetrics.getRegisteredFontNames():
        return
    folder = Path(reportlab.__file__).parent / "fonts"
    pdfmetrics.registerFont(TTFont(FONT, str(folder / "Vera.ttf")))
    pdfmetrics.registerFont(TTFont(FONT_BOLD, str(folder / "VeraBd.ttf")))
    pdfmetrics.registerFontFamily(FONT, normal=FONT, bold=FONT_BOLD)


def _style(name: str, **values: Any) -> ParagraphStyle:
    base: dict[str, Any] = {"fontName": FONT, "fontSize": 8.5, "leading": 11, "textColor": INK}
    return ParagraphStyle(name, **{**base, **values})


TITLE = _style("title", fontName=FONT_BOLD, fontSize=17, leading=21, spaceAfter=2)
SUBTITLE = _style("subtitle", fontSize=9.5, leading=13, textColor=MUTED, spaceAfter=8)
H2 = _style(
    "h2",
    fontName=FONT_BOLD,
    fontSize=11.5,
    leading=15,
    spaceBefore=10,
    spaceAfter=4,
    keepWithNext=1,
)
H3 = _style(
    "h3", fontName=FONT_BOLD, fontSize=9, leading=12, spaceBefore=4, spaceAfter=2, keepWithNext=1
)
BODY = _style("body")
NOTE = _style("note", fontSize=7.5, leading=9.5, textColor=MUTED, spaceBefore=3)
NOTE_INTRO = _style("note_intro", fontSize=7.5, leading=9.5, textColor=MUTED, keepWithNext=1)
CELL = _style("cell", fontSize=7.8, leading=9.6)
CELL_BOLD = _style("cell_bold", fontName=FONT_BOLD, fontSize=7.8, leading=9.6)
CELL_BOLD_RIGHT = _style(
    "cell_bold_right", fontName=FONT_BOLD, fontSize=7.8, leading=9.6, alignment=TA_RIGHT
)
CELL_RIGHT = _style("cell_right", fontSize=7.8, leading=9.6, alignment=TA_RIGHT)
CELL_MONO = _style("cell_mono", fontName=MONO, fontSize=6.8, leading=8.4)
CODE = _style("code", fontName=MONO, fontSize=6.5, leading=8, textColor=INK)


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


def _p(text: object, style: ParagraphStyle = CELL) -> Paragraph:
    # Courier is a standard font: keep to Latin-1 there; Vera covers the rest we write.
    raw = str(text if text not in (None, "") else "—")
    if style.fontName == MONO:
        raw = raw.encode("latin-1", "replace").decode("latin-1")
    return Paragraph(escape(raw).replace("\n", "<br/>"), style)


def _table(
    header: list[str],
    rows: list[list[Any]],
    widths: list[float],
    *,
    right: tuple[int, ...] = (),
) -> Table:
    """A ruled table: bold header row repeated on each page, cells wrapping, `right` columns
    right-aligned (money, counts)."""
    data: list[list[Any]] = [
        [_p(h, CELL_BOLD_RIGHT if i in right else CELL_BOLD) for i, h in enumerate(header)]
    ]
    for row in rows:
        data.append(
            [
                cell if isinstance(cell, Flowable) else _p(cell, CELL_RIGHT if i in right else CELL)
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


def _facts(pairs: list[tuple[str, Any]], *, right: bool = False) -> Table:
    """Label / value lines (the summary, the release), values right-aligned for money."""
    data = [
        [_p(label, CELL_BOLD), _p(value, CELL_RIGHT if right else CELL)] for label, value in pairs
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


def _none(text: str) -> Paragraph:
    return _p(text, NOTE)


class _NumberedCanvas(Canvas):
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


def _summary(facts: dict[str, Any]) -> list[Flowable]:
    payout = facts["payout"]
    source, to = payout["from"], payout["to"]
    instructions = payout["payment_instructions"]
    pairs = [
        (gettext("Payout"), f"#{payout['id']} · {payout['environment']}"),
        (gettext("Reference"), payout["reference"]),
        (
            gettext("Status"),
            gettext("%(status)s (upstream: %(upstream_status)s)")
            % {
                "status": payout["status_label"],
                "upstream_status": payout["upstream_status"] or "—",
            },
        ),
        (gettext("Amount"), money(payout["amount"], payout["currency"])),
        (
            gettext("Mode"),
            payout["mode"]
            + (
                " · "
                + gettext("funded in %(currency)s on %(network)s")
                % {"currency": instructions["currency"], "network": instructions["network"]}
                if instructions
                else ""
            ),
        ),
        (
            gettext("From"),
            gettext("%(end_user)s · virtual account %(virtual_account)s")
            % {"end_user": source["end_user"], "virtual_account": source["virtual_account"] or "—"},
        ),
        (
            gettext("To"),
            gettext("%(name)s · %(account_type)s account %(account_number)s")
            % {
                "name": to["name"],
                "account_type": to["account_type"],
                "account_number": to["account_number"],
            }
            + f"{' · ' + to['bank_name'] if to['bank_name'] else ''} · {to['country']}",
        ),
        (gettext("Recipient created by"), to["created_by"]),
        (gettext("Prepared by (maker)"), payout["maker"]),
        (gettext("Created"), when(payout["created_at"])),
        (gettext("Submitted for approval"), when(payout["submitted_at"])),
        (
            gettext("Approvals required"),
            gettext("%(count)s (approval policy version %(version)s)")
            % {
                "count": payout["approvals_required"],
                "version": payout["approval_policy_version"],
            }
            if payout["approval_policy_version"]
            else str(payout["approvals_required"]),
        ),
        (gettext("Upstream payout id"), payout["upstream_id"]),
        (gettext("Memo"), payout["memo"]),
    ]
    if payout["failure_reason"]:
        pairs.append((gettext("Failure reason"), payout["failure_reason"]))
    return [Paragraph(gettext("1. Payout summary"), H2), _facts(pairs)]


def _is_rate(name: str) -> bool:
    """Fee items that are rates (a percentage, an FX markup), not amounts of money."""
    return "percentage" in name or "markup" in name or name.endswith("rate")


def fee_lines(fees: dict[str, Any], currency: str, prefix: str = "") -> list[list[str]]:
    """The upstream's itemised fees, nested groups flattened ("Base fees: fixed fee"): amounts
    with their currency, rates as they are; the total is shown once, elsewhere."""
    lines: list[list[str]] = []
    for name, value in fees.items():
        label = f"{prefix}{name.replace('_', ' ')}"
        if isinstance(value, dict):
            lines += fee_lines(value, currency, prefix=f"{label.capitalize()}: ")
        elif name != "total_fees":
            shown = (
                gettext("%(value)s (rate)") % {"value": rate(value)}
                if _is_rate(name)
                else money(str(value), currency)
            )
            lines.append([label[:1].upper() + label[1:], shown])
    return lines


def _figures(title: str, figures: dict[str, Any], rows: list[tuple[str, str]]) -> list[Flowable]:
    fee_rows = fee_lines(figures.get("fees") or {}, figures.get("currency", ""))
    body = (
        [[label, value] for label, value in rows[:1]]
        + fee_rows
        + [[label, value] for label, value in rows[1:]]
    )
    return [
        Paragraph(title, H3),
        _table([gettext("Figure"), gettext("Amount")], body, [0.6, 0.4], right=(1,)),
    ]


def _pricing(facts: dict[str, Any]) -> list[Flowable]:
    out: list[Flowable] = [Paragraph(gettext("2. Quote and preview"), H2)]
    quote = facts["quote"]
    if quote:
        rows = [
            [gettext("Quote id"), quote["id"]],
            [gettext("Status"), quote["status"]],
            [gettext("Requested by"), quote["requested_by"]],
            [gettext("Sends"), money(quote["base_amount"], quote["base_currency"])],
            [gettext("Recipient gets"), money(quote["quote_amount"], quote["quote_currency"])],
            [
                gettext("Rate"),
                f"1 {quote['base_currency']} = {rate(quote['rate'])} {quote['quote_currency']}",
            ],
            [gettext("Service rate"), rate(quote["service_rate"])],
            [
                gettext("Payment rail"),
                quote["payment_rail"] + (f" / {quote['network']}" if quote["network"] else ""),
            ],
            [gettext("Total fees"), money(quote["total_fees"], quote["base_currency"])],
            *fee_lines(quote["fees"], quote["base_currency"], prefix=gettext("Fee: ")),
            [gettext("Created"), when(quote["created_at"])],
            [gettext("Expires"), when(quote["expires_at"])],
        ]
        out += [
            Paragraph(gettext("Quote"), H3),
            _table([gettext("Quote"), gettext("Value")], rows, [0.4, 0.6], right=(1,)),
        ]
    else:
        out.append(
            _none(gettext("No quote: the payout was priced at execution (see the preview)."))
        )
    preview = facts["preview"]
    if preview:
        out += _figures(
            gettext("Preview shown to the approvers (%(value)s)")
            % {"value": when(preview["previewed_at"])},
            preview,
            [
                (gettext("Amount"), money(preview["amount"], preview["currency"])),
                (gettext("Total fees"), money(preview["total_fees"], preview["currency"])),
                (
                    gettext("Total debited (amount + fees)"),
                    money(preview["total"], preview["total_currency"]),
                ),
                (
                    gettext("Recipient gets"),
                    money(preview["recipient_amount"], preview["recipient_currency"]),
                ),
                (gettext("Reserved quote"), preview["reserved_quote"] or "—"),
                (gettext("Reserved until"), when(preview["reserved_until"])),
            ],
        )
    else:
        out.append(_none(gettext("No preview was made.")))
    charged = facts["charged"]
    if charged:
        out += _figures(
            gettext("Charged by the upstream (%(value)s)")
            % {"value": when(charged["recorded_at"])},
            charged,
            [
                (gettext("Amount"), money(charged["amount"], charged["currency"])),
                (gettext("Total fees"), money(charged["total_fees"], charged["currency"])),
                (gettext("Total"), money(charged["total"], charged["total_currency"])),
                (
                    gettext("Recipient gets"),
                    money(charged["recipient_amount"], charged["recipient_currency"]),
                ),
                (
                    gettext("Differs from the preview"),
                    gettext("yes") if charged["differs_from_preview"] else gettext("no"),
                ),
            ],
        )
    return out


def _documents(facts: dict[str, Any]) -> list[Flowable]:
    out: list[Flowable] = [Paragraph(gettext("3. Supporting documents"), H2)]
    documents = facts["documents"]
    if not documents:
        return [*out, _none(gettext("No supporting documents were attached."))]
    rows = []
    for number, document in enumerate(documents, start=1):
        opened = "; ".join(
            gettext("%(email)s (first %(first_opened_at)s)")
            % {"email": view["email"], "first_opened_at": when(view["first_opened_at"])}
            for view in document["opened_by"]
        ) or gettext("nobody")
        rows.append(
            [
                str(number),
                _p(
                    f"{document['name']}\n{document['kind']} · {document['content_type']}\n"
                    + gettext("in this pack: %(file)s") % {"file": document["file_in_pack"]}
                ),
                ngettext("%(size)s byte", "%(size)s bytes", document["size"])
                % {"size": grouped(Decimal(str(document["size"])))},
                _p(document["sha256"], CELL_MONO),
                _p(f"{document['uploaded_by']}\n{when(document['uploaded_at'])}"),
                opened,
            ]
        )
    out.append(
        _table(
            [
                "#",
                gettext("Document"),
                gettext("Size"),
                "SHA-256",
                gettext("Uploaded"),
                gettext("Opened by"),
            ],
            rows,
            [0.04, 0.27, 0.09, 0.2, 0.18, 0.22],
            right=(2,),
        )
    )
    return out


def _approvals(facts: dict[str, Any]) -> list[Flowable]:
    out: list[Flowable] = [Paragraph(gettext("4. Approvals"), H2)]
    approvals = facts["approvals"]
    if not approvals:
        return [*out, _none(gettext("No approvals were given."))]
    rows = [
        [
            _p(f"{a['approver']}\n{a['approver_name']}".strip()),
            str(a["round"]),
            when(a["approved_at"]),
            _p(
                f"{a['second_factor']}\n"
                + gettext("verified %(at)s") % {"at": when(a["second_factor_verified_at"])}
            ),
            gettext("%(opened)s of %(total)s")
            % {"opened": a["documents_opened"], "total": a["documents_total"]},
            gettext("counts")
            if a["counts"]
            else gettext("void: %(reason)s")
            % {"reason": a["void_reason"] or gettext("earlier round")},
        ]
        for a in approvals
    ]
    out.append(
        _table(
            [
                gettext("Approver"),
                gettext("Round"),
                gettext("Approved at"),
                gettext("Second factor used"),
                gettext("Documents opened"),
                gettext("Status"),
            ],
            rows,
            [0.25, 0.07, 0.17, 0.25, 0.12, 0.14],
            right=(1, 4),
        )
    )
    return out


def _release(facts: dict[str, Any]) -> list[Flowable]:
    release = facts["release"]
    out: list[Flowable] = [Paragraph(gettext("5. Release"), H2)]
    pairs: list[tuple[str, Any]] = []
    if release["needs_code"]:
        sent = "; ".join(
            gettext("%(at)s by %(by)s to %(sent_to)s")
            % {"at": when(s["at"]), "by": s["by"], "sent_to": s["sent_to"]}
            for s in release["codes_sent"]
        )
        pairs += [
            (gettext("Verification codes sent"), sent or gettext("none")),
            (
                gettext("Code entered"),
                gettext("%(code)s (masked: the code is never kept or shown)")
                % {"code": release["code"]}
                if release["code"]
                else "—",
            ),
            (gettext("Confirmed by"), release["confirmed_by"]),
            (gettext("Confirmed at"), when(release["confirmed_at"])),
            (
                gettext("Second factor used"),
                f"{release['second_factor']} · "
                + gettext("verified %(at)s") % {"at": when(release["second_factor_verified_at"])}
                if release["confirmed_by"]
                else "—",
            ),
        ]
    else:
        pairs.append(
            (
                gettext("Verification code"),
                gettext("none: a crypto payout is released by its last approval"),
            )
        )
    pairs += [
        (
            gettext("Sent to the upstream"),
            gettext("%(at)s by %(by)s")
            % {"at": when(release["sent_upstream_at"]), "by": release["sent_upstream_by"]}
            if release["sent_upstream_by"]
            else when(release["sent_upstream_at"]),
        ),
        (gettext("Accepted by the upstream"), when(release["upstream_accepted_at"])),
        (gettext("Idempotency key"), release["idempotency_key"]),
    ]
    out.append(_facts(pairs))
    return out


def _calls(facts: dict[str, Any]) -> list[Flowable]:
    out: list[Flowable] = [
        Paragraph(gettext("6. Upstream calls"), H2),
        _p(
            gettext(
                "As the gateway's call log recorded them: secrets, tokens, codes and document "
                "contents were redacted when written. The call log keeps %(value)s days: older "
                "calls are no longer listed."
            )
            % {"value": facts["call_log_retention_days"]},
            NOTE_INTRO,
        ),
    ]
    calls = facts["upstream_calls"]
    if not calls:
        return [*out, _none(gettext("No upstream call is recorded for this payout."))]
    header = [
        "#",
        gettext("At"),
        gettext("Operation"),
        gettext("Request"),
        gettext("Status"),
        gettext("Try"),
        gettext("Took"),
    ]
    widths = [0.04, 0.24, 0.15, 0.31, 0.1, 0.06, 0.1]
    rows: list[list[Any]] = []
    spans: list[int] = []
    for number, call in enumerate(calls, start=1):
        status = call["status"] or gettext("no answer")
        rows.append(
            [
                str(number),
                when(call["at"]),
                call["operation"],
                _p(f"{call['method']} {call['path']}", CELL_MONO),
                f"{status}{' ' + call['error_code'] if call['error_code'] else ''}",
                str(call["attempt"]),
                f"{grouped(Decimal(str(call['duration_ms'])))} ms",
            ]
        )
        bodies = []
        for label, body in (
            (gettext("Request: %(body)s"), call["request_body"]),
            (gettext("Answer: %(body)s"), call["response_body"]),
        ):
            if body:
                cut = len(body) > BODY_SHOWN
                bodies.append(
                    label % {"body": body[:BODY_SHOWN]}
                    + (" " + gettext("… (whole in evidence.json)") if cut else "")
                )
        if bodies:
            spans.append(len(rows) + 1)  # +1: the header row
            rows.append([_p("\n".join(bodies), CODE), "", "", "", "", "", ""])
    table = _table(header, rows, widths, right=(5, 6))
    for row in spans:
        table.setStyle(
            TableStyle(
                [
                    ("SPAN", (0, row), (-1, row)),
                    ("LEFTPADDING", (0, row), (-1, row), 12),
                ]
            )
        )
    out.append(table)
    return out


def _events(facts: dict[str, Any]) -> list[Flowable]:
    out: list[Flowable] = [Paragraph(gettext("7. Events received"), H2)]
    events = facts["events"]
    if not events:
        return [*out, _none(gettext("No upstream event was received for this payout."))]
    rows = [
        [
            when(e["received_at"]),
            _p(f"{e['event_type']}\n{e['event_id']}"),
            e["source"],
            e["status"],
            gettext("applied")
            if e["applied"]
            else gettext("not applied: %(note)s") % {"note": e["note"]},
        ]
        for e in events
    ]
    out.append(
        _table(
            [
                gettext("Received"),
                gettext("Event"),
                gettext("Source"),
                gettext("Status"),
                gettext("Outcome"),
            ],
            rows,
            [0.24, 0.3, 0.12, 0.12, 0.22],
        )
    )
    return out


def _timeline(facts: dict[str, Any]) -> list[Flowable]:
    out: list[Flowable] = [Paragraph(gettext("8. Timeline"), H2)]
    rows = [
        [
            when(row["at"]),
            row["status"]
            if row["applied"]
            else gettext("%(status)s (reported, not applied)") % {"status": row["status"]},
            row["source"],
            row["by"] or "—",
            row["note"] or "—",
        ]
        for row in facts["timeline"]
    ]
    if not rows:
        return [*out, _none(gettext("No status change yet."))]
    out.append(
        _table(
            [gettext("At"), gettext("Status"), gettext("Source"), gettext("By"), gettext("Note")],
            rows,
            [0.24, 0.16, 0.12, 0.2, 0.28],
        )
    )
    return out


def _audit(facts: dict[str, Any]) -> list[Flowable]:
    out: list[Flowable] = [Paragraph(gettext("9. Audit trail of this payout"), H2)]
    rows = [
        [when(e["at"]), e["actor"] or gettext("system"), e["action"]] for e in facts["audit_trail"]
    ]
    if not rows:
        return [*out, _none(gettext("No audit entry names this payout."))]
    out.append(_table([gettext("At"), gettext("Who"), gettext("Action")], rows, [0.24, 0.38, 0.38]))
    return out


def _integrity(facts: dict[str, Any]) -> list[Flowable]:
    return [
        Paragraph(gettext("10. Checking this pack"), H2),
        _p(
            gettext(
                "This report is evidence.pdf in a ZIP that also holds the supporting documents as "
                "stored and evidence.json (the same facts, machine-readable, with the SHA-256 of "
                "evidence.pdf and of every document). SHA256SUMS lists the SHA-256 of every file, "
                "evidence.json included: check them with the command sha256sum -c SHA256SUMS. Each "
                "document's SHA-256 above is the one computed when it was uploaded."
            ),
            BODY,
        ),
    ]


def evidence_pdf_write(facts: dict[str, Any], out: IO[bytes]) -> None:
    """Write the report for `facts` (evidence_facts) as a PDF into `out`."""
    _fonts()
    payout = facts["payout"]
    reference = f" · {payout['reference']}" if payout["reference"] else ""

    class PageCanvas(_NumberedCanvas):
        header_left = gettext("PayOps · Payout evidence pack")
        header_right = gettext("Payout #%(id)s") % {"id": payout["id"]} + reference
        footer_left = gettext(
            "Generated %(value)s by %(value2)s · confidential: for audit and the paying bank"
        ) % {"value": when(facts["generated_at"]), "value2": facts["generated_by"]}

    document = SimpleDocTemplate(
        out,
        pagesize=A4,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN + 4 * mm,
        bottomMargin=MARGIN + 2 * mm,
        title=gettext("Evidence pack: payout #%(value)s") % {"value": payout["id"]},
        author="PayOps",
        subject=gettext("Why this payout was paid"),
    )
    story: list[Flowable] = [
        Paragraph(gettext("Evidence pack: payout #%(value)s") % {"value": payout["id"]}, TITLE),
        Paragraph(
            escape(
                gettext("%(amount)s to %(name)s")
                % {
                    "amount": money(payout["amount"], payout["currency"]),
                    "name": payout["to"]["name"],
                }
                + reference
                + f" · {payout['status_label']} · "
                + gettext("generated %(at)s") % {"at": when(facts["generated_at"])}
            ),
            SUBTITLE,
        ),
        *_summary(facts),
        *_pricing(facts),
        *_documents(facts),
        *_approvals(facts),
        *_release(facts),
        *_calls(facts),
        *_events(facts),
        *_timeline(facts),
        *_audit(facts),
        *_integrity(facts),
    ]
    document.build(story, canvasmaker=PageCanvas)
