"""The evidence report's sections after the price: the documents, the approvals, the release,
the upstream calls and events, the timeline, the audit trail and how to check the pack."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils.translation import gettext, ngettext
from reportlab.platypus import Paragraph, TableStyle
from reportlab.platypus.flowables import Flowable

from console.templatetags.ui import grouped
from payouts.evidence.report_look import (
    BODY,
    CELL_MONO,
    CODE,
    H2,
    NOTE_INTRO,
    facts_table,
    none_note,
    para,
    ruled_table,
    when,
)

# Upstream bodies are shown up to this many characters; evidence.json holds them whole.
BODY_SHOWN = 900


def documents_section(facts: dict[str, Any]) -> list[Flowable]:
    """3. The supporting documents: who uploaded and who opened each, their SHA-256."""
    out: list[Flowable] = [Paragraph(gettext("3. Supporting documents"), H2)]
    documents = facts["documents"]
    if not documents:
        return [*out, none_note(gettext("No supporting documents were attached."))]
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
                para(
                    f"{document['name']}\n{document['kind']} · {document['content_type']}\n"
                    + gettext("in this pack: %(file)s") % {"file": document["file_in_pack"]}
                ),
                ngettext("%(size)s byte", "%(size)s bytes", document["size"])
                % {"size": grouped(Decimal(str(document["size"])))},
                para(document["sha256"], CELL_MONO),
                para(f"{document['uploaded_by']}\n{when(document['uploaded_at'])}"),
                opened,
            ]
        )
    out.append(
        ruled_table(
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


def approvals_section(facts: dict[str, Any]) -> list[Flowable]:
    """4. Every approval: who, which round, the second factor used, documents opened."""
    out: list[Flowable] = [Paragraph(gettext("4. Approvals"), H2)]
    approvals = facts["approvals"]
    if not approvals:
        return [*out, none_note(gettext("No approvals were given."))]
    rows = [
        [
            para(f"{a['approver']}\n{a['approver_name']}".strip()),
            str(a["round"]),
            when(a["approved_at"]),
            para(
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
        ruled_table(
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


def release_section(facts: dict[str, Any]) -> list[Flowable]:
    """5. The release: codes sent (the code masked), who confirmed, the idempotency key."""
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
    out.append(facts_table(pairs))
    return out


def _call_bodies(call: dict[str, Any]) -> str:
    """The call's request and answer bodies, each cut at BODY_SHOWN characters."""
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
    return "\n".join(bodies)


def _call_rows(calls: list[dict[str, Any]]) -> tuple[list[list[Any]], list[int]]:
    """One row a call, each followed by a row of its bodies spanning the table (their indexes)."""
    rows: list[list[Any]] = []
    spans: list[int] = []
    for number, call in enumerate(calls, start=1):
        status = call["status"] or gettext("no answer")
        rows.append(
            [
                str(number),
                when(call["at"]),
                call["operation"],
                para(f"{call['method']} {call['path']}", CELL_MONO),
                f"{status}{' ' + call['error_code'] if call['error_code'] else ''}",
                str(call["attempt"]),
                f"{grouped(Decimal(str(call['duration_ms'])))} ms",
            ]
        )
        if bodies := _call_bodies(call):
            spans.append(len(rows) + 1)  # +1: the header row
            rows.append([para(bodies, CODE), "", "", "", "", "", ""])
    return rows, spans


def calls_section(facts: dict[str, Any]) -> list[Flowable]:
    """6. The upstream calls the gateway's call log kept for this payout, bodies redacted."""
    out: list[Flowable] = [
        Paragraph(gettext("6. Upstream calls"), H2),
        para(
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
        return [*out, none_note(gettext("No upstream call is recorded for this payout."))]
    header = [
        "#",
        gettext("At"),
        gettext("Operation"),
        gettext("Request"),
        gettext("Status"),
        gettext("Try"),
        gettext("Took"),
    ]
    rows, spans = _call_rows(calls)
    table = ruled_table(header, rows, [0.04, 0.24, 0.15, 0.31, 0.1, 0.06, 0.1], right=(5, 6))
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


def events_section(facts: dict[str, Any]) -> list[Flowable]:
    """7. The upstream events received for this payout and what became of each."""
    out: list[Flowable] = [Paragraph(gettext("7. Events received"), H2)]
    events = facts["events"]
    if not events:
        return [*out, none_note(gettext("No upstream event was received for this payout."))]
    rows = [
        [
            when(e["received_at"]),
            para(f"{e['event_type']}\n{e['event_id']}"),
            e["source"],
            e["status"],
            gettext("applied")
            if e["applied"]
            else gettext("not applied: %(note)s") % {"note": e["note"]},
        ]
        for e in events
    ]
    out.append(
        ruled_table(
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


def timeline_section(facts: dict[str, Any]) -> list[Flowable]:
    """8. The payout's status changes, applied or only reported."""
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
        return [*out, none_note(gettext("No status change yet."))]
    out.append(
        ruled_table(
            [gettext("At"), gettext("Status"), gettext("Source"), gettext("By"), gettext("Note")],
            rows,
            [0.24, 0.16, 0.12, 0.2, 0.28],
        )
    )
    return out


def audit_section(facts: dict[str, Any]) -> list[Flowable]:
    """9. The audit entries that name this payout."""
    out: list[Flowable] = [Paragraph(gettext("9. Audit trail of this payout"), H2)]
    rows = [
        [when(e["at"]), e["actor"] or gettext("system"), e["action"]] for e in facts["audit_trail"]
    ]
    if not rows:
        return [*out, none_note(gettext("No audit entry names this payout."))]
    out.append(
        ruled_table([gettext("At"), gettext("Who"), gettext("Action")], rows, [0.24, 0.38, 0.38])
    )
    return out


def integrity_section(facts: dict[str, Any]) -> list[Flowable]:
    """10. How to check the pack: the ZIP, evidence.json and SHA256SUMS."""
    return [
        Paragraph(gettext("10. Checking this pack"), H2),
        para(
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
