"""The evidence report's first sections: what was paid and at what price (the payout's summary,
its quote, the preview the approvers saw and what the upstream charged, fees itemised)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext
from reportlab.platypus import Paragraph
from reportlab.platypus.flowables import Flowable

from payouts.evidence.report_look import (
    H2,
    H3,
    facts_table,
    money,
    none_note,
    rate,
    ruled_table,
    when,
)


def _mode(payout: dict[str, Any]) -> str:
    instructions = payout["payment_instructions"]
    if not instructions:
        return payout["mode"]
    return (
        payout["mode"]
        + " · "
        + gettext("funded in %(currency)s on %(network)s")
        % {"currency": instructions["currency"], "network": instructions["network"]}
    )


def _to(to: dict[str, Any]) -> str:
    return (
        gettext("%(name)s · %(account_type)s account %(account_number)s")
        % {
            "name": to["name"],
            "account_type": to["account_type"],
            "account_number": to["account_number"],
        }
        + f"{' · ' + to['bank_name'] if to['bank_name'] else ''} · {to['country']}"
    )


def _approvals_required(payout: dict[str, Any]) -> str:
    if not payout["approval_policy_version"]:
        return str(payout["approvals_required"])
    return gettext("%(count)s (approval policy version %(version)s)") % {
        "count": payout["approvals_required"],
        "version": payout["approval_policy_version"],
    }


def summary_section(facts: dict[str, Any]) -> list[Flowable]:
    """1. The payout: amount, parties, who prepared it, the policy it was approved under."""
    payout = facts["payout"]
    source, to = payout["from"], payout["to"]
    status = gettext("%(status)s (upstream: %(upstream_status)s)") % {
        "status": payout["status_label"],
        "upstream_status": payout["upstream_status"] or "—",
    }
    pairs = [
        (gettext("Payout"), f"#{payout['id']} · {payout['environment']}"),
        (gettext("Reference"), payout["reference"]),
        (gettext("Status"), status),
        (gettext("Amount"), money(payout["amount"], payout["currency"])),
        (gettext("Mode"), _mode(payout)),
        (
            gettext("From"),
            gettext("%(end_user)s · virtual account %(virtual_account)s")
            % {"end_user": source["end_user"], "virtual_account": source["virtual_account"] or "—"},
        ),
        (gettext("To"), _to(to)),
        (gettext("Recipient created by"), to["created_by"]),
        (gettext("Prepared by (maker)"), payout["maker"]),
        (gettext("Created"), when(payout["created_at"])),
        (gettext("Submitted for approval"), when(payout["submitted_at"])),
        (gettext("Approvals required"), _approvals_required(payout)),
        (gettext("Upstream payout id"), payout["upstream_id"]),
        (gettext("Memo"), payout["memo"]),
    ]
    if payout["failure_reason"]:
        pairs.append((gettext("Failure reason"), payout["failure_reason"]))
    return [Paragraph(gettext("1. Payout summary"), H2), facts_table(pairs)]


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
        ruled_table([gettext("Figure"), gettext("Amount")], body, [0.6, 0.4], right=(1,)),
    ]


def _quote(quote: dict[str, Any] | None) -> list[Flowable]:
    if not quote:
        return [
            none_note(gettext("No quote: the payout was priced at execution (see the preview)."))
        ]
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
    return [
        Paragraph(gettext("Quote"), H3),
        ruled_table([gettext("Quote"), gettext("Value")], rows, [0.4, 0.6], right=(1,)),
    ]


def _preview(preview: dict[str, Any] | None) -> list[Flowable]:
    if not preview:
        return [none_note(gettext("No preview was made."))]
    return _figures(
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


def _charged(charged: dict[str, Any] | None) -> list[Flowable]:
    if not charged:
        return []
    return _figures(
        gettext("Charged by the upstream (%(value)s)") % {"value": when(charged["recorded_at"])},
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


def pricing_section(facts: dict[str, Any]) -> list[Flowable]:
    """2. The quote, the preview the approvers saw, and what the upstream charged."""
    return [
        Paragraph(gettext("2. Quote and preview"), H2),
        *_quote(facts["quote"]),
        *_preview(facts["preview"]),
        *_charged(facts["charged"]),
    ]
