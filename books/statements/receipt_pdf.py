"""A completed payout's receipt as a PDF, in the statements' house look (`pdf.py`): the payment,
the amounts (fees itemised, the markup and penalty inside the rate), the recipient, the approvals
with their second factor, and the timestamps."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import IO, Any
from xml.sax.saxutils import escape

from django.utils.translation import gettext
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, Spacer
from reportlab.platypus.flowables import Flowable

from books.statements.pdf import amount, document_template, rate_text, when_utc
from books.statements.receipts import Receipt
from console.templatetags.ui import percent
from payouts.evidence.facts import second_factor_label
from payouts.evidence.report_look import (
    H2,
    NOTE,
    SUBTITLE,
    TITLE,
    NumberedCanvas,
    facts_table,
    fonts_register,
    para,
    ruled_table,
)


def _figures(receipt: Receipt) -> list[list[str]]:
    c = receipt.currency
    rate = (
        f"1 {c} = {rate_text(receipt.rate)} {receipt.recipient_currency}"
        if receipt.rate is not None
        else "—"
    )
    return [
        [gettext("Amount sent"), amount(receipt.amount, c)],
        *[[label, amount(value, c)] for label, value in receipt.fee_items],
        [gettext("Total fees"), amount(receipt.total_fees, c)],
        [gettext("Total debited"), amount(receipt.total_debited, c)],
        [gettext("Rate paid (service rate)"), rate],
        [
            gettext("Commercial rate (before FX markup and penalty)"),
            f"1 {c} = {rate_text(receipt.fees.rate)} {receipt.recipient_currency}"
            if receipt.fees.rate
            else "—",
        ],
        [
            gettext("FX markup in the rate (%(fraction)s)")
            % {"fraction": percent(receipt.fees.fx_markup_fraction)},
            f"{amount(receipt.fees.fx_markup_usd, c)} "
            f"({amount(receipt.fees.fx_markup_recipient, receipt.recipient_currency)})",
        ],
        [
            gettext("Out-of-hours penalty in the rate (%(fraction)s)")
            % {"fraction": percent(receipt.fees.penalty_fraction)},
            f"{amount(receipt.fees.penalty_usd, c)} "
            f"({amount(receipt.fees.penalty_recipient, receipt.recipient_currency)})",
        ],
        [gettext("Recipient gets"), amount(receipt.recipient_amount, receipt.recipient_currency)],
    ]


def _approvals(receipt: Receipt) -> Flowable:
    approvals = [
        [
            str(a.step),
            f"{a.name or a.email}\n{a.email}",
            when_utc(a.at),
            second_factor_label(a.second_factor) or "—",
        ]
        for a in receipt.approvals
    ]
    if not approvals:
        return para(gettext("No approvals are recorded for this payout."), NOTE)
    return ruled_table(
        [gettext("Step"), gettext("Approver"), gettext("When"), gettext("Second factor")],
        approvals,
        [0.08, 0.46, 0.26, 0.2],
    )


def _heading(receipt: Receipt) -> list[Flowable]:
    return [
        Paragraph("PayOps", TITLE),
        Paragraph(
            escape(
                gettext(
                    "Payout receipt · %(amount)s to %(recipient_name)s · completed %(completed_at)s"
                )
                % {
                    "amount": amount(receipt.amount, receipt.currency),
                    "recipient_name": receipt.recipient_name,
                    "completed_at": when_utc(receipt.completed_at),
                }
            ),
            SUBTITLE,
        ),
    ]


def _payment(receipt: Receipt) -> list[tuple[str, Any]]:
    payout = receipt.payout
    return [
        (gettext("Payout"), f"#{payout.pk} · {payout.environment.name}"),
        (gettext("Reference"), payout.reference or "—"),
        (gettext("Upstream payout id"), payout.upstream_id or "—"),
        (gettext("Quote id"), receipt.quote_id or "—"),
        ("UETR", receipt.uetr or gettext("— (not given by the upstream)")),
        (gettext("Status"), payout.get_status_display()),
        (gettext("Memo"), payout.memo or "—"),
    ]


def _recipient(receipt: Receipt) -> list[tuple[str, Any]]:
    return [
        (gettext("Name"), receipt.recipient_name),
        (gettext("Bank"), receipt.recipient_bank or "—"),
        (gettext("Payment rail"), receipt.recipient_rail or "—"),
        (gettext("Account"), receipt.recipient_account),
        (gettext("Country"), receipt.recipient_country or "—"),
    ]


def _timestamps(receipt: Receipt) -> list[tuple[str, Any]]:
    payout = receipt.payout
    return [
        (gettext("Prepared by (maker)"), receipt.maker),
        (gettext("Created"), when_utc(payout.created_at)),
        (gettext("Submitted for approval"), when_utc(payout.submitted_at)),
        (gettext("Charged by the upstream"), when_utc(payout.charged_at)),
        (gettext("Completed"), when_utc(receipt.completed_at)),
    ]


def receipt_pdf_write(receipt: Receipt, out: IO[bytes]) -> None:
    """Write the payout's receipt as a PDF into `out`."""
    fonts_register()
    payout = receipt.payout

    class PageCanvas(NumberedCanvas):
        header_left = gettext("PayOps · Payout receipt")
        header_right = gettext("Payout #%(pk)s") % {"pk": payout.pk} + (
            f" · {payout.reference}" if payout.reference else ""
        )
        footer_left = gettext("Generated %(generated_at)s") % {
            "generated_at": when_utc(datetime.now(UTC))
        }

    document = document_template(
        out,
        title=gettext("Receipt: payout #%(pk)s") % {"pk": payout.pk},
        subject=gettext("Payout receipt"),
    )
    story: list[Flowable] = [
        *_heading(receipt),
        Paragraph(gettext("Payment"), H2),
        facts_table(_payment(receipt)),
        Paragraph(gettext("Amounts"), H2),
        ruled_table(
            [gettext("Figure"), gettext("Amount")], _figures(receipt), [0.6, 0.4], right=(1,)
        ),
        Paragraph(gettext("Recipient"), H2),
        facts_table(_recipient(receipt)),
        Paragraph(gettext("Approvals"), H2),
        _approvals(receipt),
        Paragraph(gettext("Timestamps"), H2),
        facts_table(_timestamps(receipt)),
        Spacer(1, 4 * mm),
        para(
            gettext(
                "Figures as charged by the upstream. The account was debited the amount plus the "
                "fees; the recipient was paid the amount converted at the rate shown."
            ),
            NOTE,
        ),
    ]
    document.build(story, canvasmaker=PageCanvas)
