"""What an evidence pack says about one payout, as plain JSON-ready values (Decimals as exact
strings, times as ISO 8601 UTC): read once, then written both as evidence.json and as the PDF."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils.translation import gettext_lazy

from gateway.models import UpstreamCall
from payouts.models import Approval, Payout, PayoutDocument
from payouts.tracking.timeline import timeline
from staff.models import AuditEntry, StaffUser

SCHEMA = "payops.evidence/1"
# Which second factor an approval or a release used, in words.
SECOND_FACTOR_LABELS = {
    "totp": gettext_lazy("Authenticator app (TOTP)"),
    "passkey": "Passkey",
    "recovery_code": gettext_lazy("Recovery code"),
    "api_token": gettext_lazy("API token created after a step-up"),
    "": gettext_lazy("Not recorded (before second factors were recorded)"),
}
# A call the payout's audit entries name by time (sending the code, a preview) is the last call
# of that operation in the environment at most this long before the entry.
CALL_MATCH_WINDOW = timedelta(minutes=5)
# What the release step shows of the code: never any of its digits.
CODE_MASKED = "••••••"


def _at(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def _amount(value: Decimal | None) -> str:
    return "" if value is None else str(value)


def _email(user: StaffUser | None) -> str:
    return user.email if user else ""


def second_factor_label(method: str) -> str:
    return str(SECOND_FACTOR_LABELS.get(method, method))


def payout_audit_entries(payout: Payout) -> list[AuditEntry]:
    return list(
        AuditEntry.objects.filter(target_type="payouts.payout", target_id=str(payout.pk))
        .select_related("actor")
        .order_by("at", "pk")
    )


def _summary(payout: Payout) -> dict[str, Any]:
    recipient = payout.recipient
    account = payout.virtual_account
    return {
        "id": payout.pk,
        "reference": payout.reference,
        "status": payout.status,
        "status_label": payout.get_status_display(),
        "mode": payout.mode,
        "environment": payout.environment.name,
        "amount": _amount(payout.amount),
        "currency": payout.currency,
        "memo": payout.memo,
        "maker": _email(payout.maker),
        "created_at": _at(payout.created_at),
        "submitted_at": _at(payout.submitted_at),
        "upstream_id": payout.upstream_id or "",
        "upstream_status": payout.upstream_status,
        "failure_reason": payout.failure_reason,
        "payment_instructions": payout.payment_instructions,
        "from": {
            "end_user": account.end_user.display_name,
            "virtual_account": account.upstream_id or "",
            "currency": account.currency,
        },
        "to": {
            "name": recipient.display_name,
            "upstream_id": recipient.upstream_id or "",
            "account_type": recipient.account_type,
            "account_number": recipient.masked_account_number,
            "bank_name": recipient.bank_name,
            "country": recipient.country,
            "created_by": _email(recipient.created_by),
        },
        "approval_policy_version": payout.approval_policy.version
        if payout.approval_policy
        else None,
        "approvals_required": payout.approvals_required,
    }


def _quote(payout: Payout) -> dict[str, Any] | None:
    quote = payout.quote
    if quote is None:
        return None
    return {
        "id": quote.upstream_id,
        "status": quote.status,
        "requested_by": _email(quote.requested_by),
        "base_amount": _amount(quote.base_amount),
        "base_currency": quote.base_currency,
        "quote_amount": _amount(quote.quote_amount),
        "quote_currency": quote.quote_currency,
        "rate": _amount(quote.rate),
        "service_rate": _amount(quote.service_rate),
        "payment_rail": quote.account_type,
        "network": quote.network,
        "total_fees": _amount(quote.total_fees),
        "fees": {
            name: _amount(getattr(quote, name))
            for name in (
                "base_fixed_fee",
                "base_percentage_fee",
                "base_fx_markup",
                "client_fixed_fee",
                "client_percentage_fee",
                "client_fx_markup",
                "network_fee",
                "penalty_markup",
            )
            if getattr(quote, name) is not None
        },
        "created_at": _at(quote.created_at),
        "expires_at": _at(quote.expires_at),
    }


def _preview(payout: Payout) -> dict[str, Any] | None:
    if payout.previewed_at is None:
        return None
    return {
        "previewed_at": _at(payout.previewed_at),
        "amount": _amount(payout.amount),
        "currency": payout.currency,
        "fees": payout.preview_fees or {},  # as the upstream itemised them
        "total_fees": _amount(payout.preview_total_fees),
        "total": _amount(payout.preview_total),
        "total_currency": payout.total_currency,
        "recipient_amount": _amount(payout.preview_recipient_amount),
        "recipient_currency": payout.preview_recipient_currency,
        "reserved_quote": payout.preview_quote_id,
        "reserved_until": _at(payout.preview_quote_expires_at),
    }


def _charged(payout: Payout) -> dict[str, Any] | None:
    if payout.charged_at is None:
        return None
    return {
        "recorded_at": _at(payout.charged_at),
        "amount": _amount(payout.charged_amount),
        "currency": payout.charged_currency,
        "fees": payout.charged_fees or {},
        "total_fees": _amount(payout.charged_total_fees),
        "total": _amount(payout.charged_total),
        "total_currency": payout.charged_total_currency,
        "recipient_amount": _amount(payout.charged_recipient_amount),
        "recipient_currency": payout.charged_recipient_currency,
        "differs_from_preview": payout.charge_differs,
        "differences": payout.charge_differences,
    }


def document_pack_name(index: int, document: PayoutDocument) -> str:
    """The document's path inside the ZIP: numbered, its uploaded name without any folder."""
    name = document.file_name.replace("\\", "/").rsplit("/", 1)[-1].strip() or "document"
    safe = "".join(c if c.isprintable() and c not in '<>:"|?*' else "_" for c in name)
    return f"documents/{index:02d}-{safe}"


def _documents(documents: list[PayoutDocument]) -> list[dict[str, Any]]:
    return [
        {
            "file_in_pack": document_pack_name(index, document),
            "name": document.file_name,
            "kind": document.kind,
            "content_type": document.content_type,
            "size": document.size,
            "sha256": document.sha256,
            "uploaded_by": _email(document.uploaded_by),
            "uploaded_at": _at(document.uploaded_at),
            "opened_by": [
                {
                    "email": view.viewer.email,
                    "first_opened_at": _at(view.first_viewed_at),
                    "last_opened_at": _at(view.last_viewed_at),
                }
                for view in document.views.all()
            ],
        }
        for index, document in enumerate(documents, start=1)
    ]


def _approvals(payout: Payout, documents: list[PayoutDocument]) -> list[dict[str, Any]]:
    opened: dict[int, int] = {}
    for document in documents:
        for view in document.views.all():
            opened[view.viewer_id] = opened.get(view.viewer_id, 0) + 1
    approvals = Approval.objects.filter(payout=payout).select_related("approver")
    return [
        {
            "approver": approval.approver.email,
            "approver_name": approval.approver.get_full_name(),
            "round": approval.round,
            "approved_at": _at(approval.created_at),
            "second_factor_method": approval.second_factor_method,
            "second_factor": second_factor_label(approval.second_factor_method),
            "second_factor_verified_at": _at(approval.second_factor_at),
            "documents_opened": opened.get(approval.approver_id, 0),
            "documents_total": len(documents),
            "counts": approval.voided_at is None and approval.round == payout.approval_round,
            "voided_at": _at(approval.voided_at),
            "void_reason": approval.void_reason,
        }
        for approval in approvals
    ]


def _release(payout: Payout, entries: list[AuditEntry]) -> dict[str, Any]:
    """The code sent and entered (never the code: masked), and when the payout went upstream."""
    sent = [
        {"at": _at(e.at), "by": _email(e.actor), "sent_to": str(e.details.get("sent_to", ""))}
        for e in entries
        if e.action == "payout.otp_sent"
    ]
    confirms = [e for e in entries if e.action == "payout.otp_entered"]
    confirm = confirms[-1] if confirms else None
    submitting = [e for e in entries if e.action == "payout.submitting"]
    initiated = [e for e in entries if e.action == "payout.initiated"]
    method = str(confirm.details.get("second_factor_method", "")) if confirm else ""
    return {
        "needs_code": payout.mode == "fiat",
        "codes_sent": sent,
        "code": CODE_MASKED if confirm else "",
        "confirmed_by": _email(confirm.actor) if confirm else "",
        "confirmed_at": _at(confirm.at) if confirm else "",
        "second_factor_method": method,
        "second_factor": second_factor_label(method) if confirm else "",
        "second_factor_verified_at": (
            str(confirm.details.get("second_factor_at", "")) if confirm else ""
        ),
        "sent_upstream_at": _at(submitting[-1].at) if submitting else "",
        "sent_upstream_by": _email(submitting[-1].actor) if submitting else "",
        "upstream_accepted_at": _at(initiated[-1].at) if initiated else "",
        "idempotency_key": str(payout.idempotency_key),
    }


def payout_calls(payout: Payout, entries: list[AuditEntry]) -> list[UpstreamCall]:
    """
    The upstream calls made for this payout, from the call log as written (already redacted):
    the initiation under each idempotency key the payout used, every read of its upstream id,
    and the calls its audit entries name by time (each code sent, each preview): the last call of
    that operation in the environment before the entry, with the body naming the same address
    or recipient.
    """
    keys = {str(payout.idempotency_key)}
    keys |= {str(e.details["idempotency_key"]) for e in entries if e.details.get("idempotency_key")}
    calls = UpstreamCall.objects.filter(environment_id=payout.environment_id)
    found = {call.pk: call for call in calls.filter(idempotency_key__in=keys)}
    if payout.upstream_id:
        for call in calls.filter(path__endswith=f"payouts/{payout.upstream_id}"):
            found[call.pk] = call
    named = {
        "payout.otp_sent": ("otp_send", lambda e: str(e.details.get("sent_to", ""))),
        "payout.previewed": ("payout_preview", lambda e: payout.recipient.upstream_id or ""),
    }
    for entry in entries:
        if entry.action not in named:
            continue
        operation, needle = named[entry.action]
        candidates = calls.filter(
            operation=operation,
            created_at__lte=entry.at,
            created_at__gte=entry.at - CALL_MATCH_WINDOW,
        ).filter(Q(request_body__contains=needle(entry)))
        last = candidates.order_by("-created_at", "-pk").first()
        if last is None:
            continue
        found[last.pk] = last
        # Its earlier attempts (the gateway's retries of the same call) come with it.
        for earlier in candidates.filter(attempt__lt=last.attempt).order_by("-created_at")[
            : last.attempt - 1
        ]:
            found[earlier.pk] = earlier
    return sorted(found.values(), key=lambda call: (call.created_at, call.pk))


def _call(call: UpstreamCall) -> dict[str, Any]:
    return {
        "at": _at(call.created_at),
        "operation": call.operation,
        "method": call.method,
        "path": call.path,
        "status": call.status,
        "duration_ms": call.duration_ms,
        "attempt": call.attempt,
        "idempotency_key": call.idempotency_key,
        "error_code": call.error_code,
        "request_body": call.request_body,
        "response_body": call.response_body,
    }


def _events(payout: Payout) -> list[dict[str, Any]]:
    return [
        {
            "received_at": _at(event.received_at),
            "occurred_at": _at(event.occurred_at),
            "event_id": event.event_id,
            "event_type": event.event_type,
            "source": event.get_source_display(),
            "status": event.status,
            "applied": event.applied,
            "note": event.note,
        }
        for event in payout.events.order_by("received_at", "pk")
    ]


def _timeline(payout: Payout) -> list[dict[str, Any]]:
    return [
        {
            "at": _at(row.at),
            "status": row.status,
            "source": row.source,
            "by": row.by,
            "note": row.note,
            "applied": row.applied,
            "event_id": row.event_id,
        }
        for row in timeline(payout)
    ]


def _audit(entries: list[AuditEntry]) -> list[dict[str, Any]]:
    return [
        {"at": _at(e.at), "actor": _email(e.actor), "action": e.action, "details": e.details}
        for e in entries
    ]


def evidence_facts(payout: Payout, *, by: StaffUser, now: datetime) -> dict[str, Any]:
    """Everything the pack says about `payout`, JSON-ready (the manifest is added when written)."""
    payout = (
        Payout.objects.select_related(
            "environment",
            "maker",
            "virtual_account__end_user",
            "recipient__created_by",
            "quote__requested_by",
            "approval_policy",
        )
        .prefetch_related("documents__uploaded_by", "documents__views__viewer")
        .get(pk=payout.pk)
    )
    documents = list(payout.documents.all())
    entries = payout_audit_entries(payout)
    return {
        "schema": SCHEMA,
        "generated_at": _at(now),
        "generated_by": by.email,
        "payout": _summary(payout),
        "quote": _quote(payout),
        "preview": _preview(payout),
        "charged": _charged(payout),
        "documents": _documents(documents),
        "approvals": _approvals(payout, documents),
        "release": _release(payout, entries),
        "upstream_calls": [_call(call) for call in payout_calls(payout, entries)],
        "call_log_retention_days": settings.GATEWAY_CALL_LOG_RETENTION_DAYS,
        "events": _events(payout),
        "timeline": _timeline(payout),
        "audit_trail": _audit(entries),
    }
