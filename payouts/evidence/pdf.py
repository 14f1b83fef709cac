"""The evidence pack's report, laid out for a person reading it at a bank: a title block, one
numbered section a stage of the payout's life, tables with money right-aligned and its currency,
the payout on every page's header, the page number and when it was generated in every footer.

Built with reportlab's platypus from the facts `facts.evidence_facts` gathered (the same ones
evidence.json holds), with the Vera fonts reportlab ships (no system font needed). The house look
is `report_look`; the sections are `report_terms` (the payout and its price) and `report_trail`
(documents, approvals, release, calls, events, timeline, audit).
"""

from __future__ import annotations

from typing import IO, Any
from xml.sax.saxutils import escape

from django.utils.translation import gettext
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate
from reportlab.platypus.flowables import Flowable

from payouts.evidence.report_look import (
    MARGIN,
    SUBTITLE,
    TITLE,
    NumberedCanvas,
    fonts_register,
    money,
    when,
)
from payouts.evidence.report_terms import pricing_section, summary_section
from payouts.evidence.report_trail import (
    approvals_section,
    audit_section,
    calls_section,
    documents_section,
    events_section,
    integrity_section,
    release_section,
    timeline_section,
)


def evidence_pdf_write(facts: dict[str, Any], out: IO[bytes]) -> None:
    """Write the report for `facts` (evidence_facts) as a PDF into `out`."""
    fonts_register()
    payout = facts["payout"]
    reference = f" · {payout['reference']}" if payout["reference"] else ""

    class PageCanvas(NumberedCanvas):
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
        *summary_section(facts),
        *pricing_section(facts),
        *documents_section(facts),
        *approvals_section(facts),
        *release_section(facts),
        *calls_section(facts),
        *events_section(facts),
        *timeline_section(facts),
        *audit_section(facts),
        *integrity_section(facts),
    ]
    document.build(story, canvasmaker=PageCanvas)
