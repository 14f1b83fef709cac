"""Maker-checker endpoints: approve, reject, the OTP step (read, send, confirm), cancel, re-send,
the inbox."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from ninja import Field, Router, Schema

from config.api_support import ERROR_RESPONSES, EnvironmentName, ErrorOut
from payouts.api_out import UpstreamWaitOut, upstream_wait_out
from payouts.api_support import payout_found
from payouts.approval_selectors import SCOPE_ANYONE, SCOPE_MINE, approval_inbox, valid_approvals
from payouts.approvals import payout_approve, payout_cancel, payout_reject
from payouts.errors import PayoutActionRefused
from payouts.initiation import payout_retry
from payouts.models import Payout
from payouts.otp import otp_tries_left, payout_otp_confirm, payout_otp_send
from payouts.otp_step import OtpStep, otp_step
from payouts.selectors import can_read_payouts, require_payout_reader
from quotes.api import environment_of, staff_of
from staff.errors import ServiceError

router = Router(tags=["approvals"])
ERRORS: dict[int, Any] = {**ERROR_RESPONSES, 409: ErrorOut, 502: ErrorOut, 503: ErrorOut}


class ApproverOut(Schema):
    email: str
    approved_at: datetime


class OtpStepOut(Schema):
    """The release step of a fiat payout, in the same words as the payout page's step."""

    state: str = Field(
        description="not_sent, no_email (the environment has no verification email), sent, "
        "wrong_code (tries remain), blocked (no try left), expired, replaced (a later code, "
        "for any payout of this environment, replaced it), checking (entered; the upstream "
        "checks it as it receives the payout)."
    )
    sent_to: str = Field(description="Where the code went, masked (`p•••@example.com`).")
    sent_at: datetime | None = Field(description="When the current code was sent (our clock).")
    expires_at: datetime | None = Field(description="When it stops working (upstream's clock).")
    tries_left: int = Field(
        description="Wrong codes still allowed. The upstream does not say: PayOps counts them."
    )
    max_tries: int
    codes_sent: int = Field(description="Codes sent for this payout; each replaced the previous.")
    error_code: str = Field(
        description="Empty, or otp_not_sent, no_verification_email, otp_wrong, otp_blocked, "
        "otp_expired, otp_replaced (the same codes a refused confirm answers with)."
    )
    message: str = Field(description="What happened and what to do next, in plain words.")
    can_send: bool = Field(description="A code (or a new one) can be sent now.")
    can_confirm: bool = Field(description="A code can be entered now.")


def otp_step_out(step: OtpStep) -> OtpStepOut:
    return OtpStepOut(
        state=step.state,
        sent_to=step.sent_to,
        sent_at=step.sent_at,
        expires_at=step.expires_at,
        tries_left=step.tries_left,
        max_tries=step.max_tries,
        codes_sent=step.codes_sent,
        error_code=step.error_code,
        message=step.message,
        can_send=step.can_send,
        can_confirm=step.can_confirm,
    )


class PayoutStateOut(Schema):
    """Where a payout stands in maker-checker and initiation."""

    id: int
    status: str = Field(description="Our normalised status (draft … submitting, then upstream's).")
    approvals: list[ApproverOut] = Field(description="This round's approvals, oldest first.")
    approvals_required: int = Field(description="Distinct approvers the policy asks for.")
    rejection_reason: str
    upstream_id: str | None = Field(description="The upstream's payout id once it answered.")
    otp_sent_to: str = Field(description="Where the last code was sent (fiat only).")
    otp_expires_at: datetime | None
    otp_tries_left: int = Field(description="Wrong codes allowed before the code is blocked.")
    initiation_error: str = Field(
        description="The last initiation problem in plain words (e.g. wrong code, tries left)."
    )
    upstream_wait: UpstreamWaitOut | None = Field(
        description="While `submitting`: the initiation waits to be sent again (e.g. the "
        "upstream's rate limit), with the next attempt and its time; null otherwise."
    )
    otp: OtpStepOut | None = Field(
        description="The release step (fiat, approved or being sent), else null."
    )


def state_out(payout: Payout) -> PayoutStateOut:
    return PayoutStateOut(
        id=payout.pk,
        status=payout.status,
        approvals=[
            ApproverOut(email=a.approver.email, approved_at=a.created_at)
            for a in valid_approvals(payout)
        ],
        approvals_required=payout.approvals_required,
        rejection_reason=payout.rejection_reason,
        upstream_id=payout.upstream_id,
        otp_sent_to=payout.otp_sent_to,
        otp_expires_at=payout.otp_expires_at,
        otp_tries_left=otp_tries_left(payout),
        upstream_wait=upstream_wait_out(payout),
        initiation_error=payout.initiation_error,
        otp=otp_step_out(step) if (step := otp_step(payout)) else None,
    )


class ApprovalOut(PayoutStateOut):
    complete: bool = Field(description="True when this approval was the last one needed.")


class RejectIn(Schema):
    reason: str = Field(description="Why (shown to the maker), at most 500 characters.")


class CancelIn(Schema):
    reason: str = Field("", description="Optional, for the audit trail.")


class OtpSentOut(Schema):
    sent_to: str = Field(description="The environment's verification email.")
    expires_at: datetime = Field(description="When the code stops working (upstream's clock).")
    replaced_previous: bool = Field(
        description="True when an earlier code of this payout was replaced: it no longer works."
    )
    otp: OtpStepOut | None = Field(description="The release step after sending (tries reset).")


class OtpConfirmIn(Schema):
    code: str = Field(description="The 6 digits from the verification email.")


@router.post("/payouts/{payout_id}/approve", response={200: ApprovalOut, **ERRORS})
def approve(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """Approve (approvers; never the maker nor the recipient's creator; once per person)."""
    user = staff_of(request)
    outcome = payout_approve(payout=payout_found(request, payout_id, environment), by=user)
    fresh = Payout.objects.select_related("recipient").get(pk=payout_id)
    return 200, ApprovalOut(**state_out(fresh).dict(), complete=outcome.complete)


@router.post("/payouts/{payout_id}/reject", response={200: PayoutStateOut, **ERRORS})
def reject(
    request: HttpRequest,
    payout_id: int,
    payload: RejectIn,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Reject with a reason: the payout goes back to its maker."""
    payout = payout_found(request, payout_id, environment)
    return 200, state_out(payout_reject(payout=payout, by=staff_of(request), reason=payload.reason))


@router.get("/payouts/{payout_id}/otp", response={200: OtpStepOut, **ERRORS})
def otp_state(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """
    The release step of a fiat payout: state, tries left, expiry, and what to do next. Follow a
    confirmed code here: a wrong one brings the step to `wrong_code` with the tries left.
    """
    user = staff_of(request)
    payout = payout_found(request, payout_id, environment)
    require_payout_reader(user)
    step = otp_step(payout)
    if step is None:
        raise PayoutActionRefused(
            "no_otp_step",
            "This payout needs no code now: only an approved fiat payout not yet sent has "
            f"one (this one is {payout.get_status_display().lower()}, {payout.mode}).",
        )
    return 200, otp_step_out(step)


@router.post("/payouts/{payout_id}/otp/send", response={200: OtpSentOut, **ERRORS})
def otp_send(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """
    Send the verification code of an approved fiat payout to the environment's email. Sending
    again sends a new code that replaces the previous one (which stops working) and resets the
    tries.
    """
    payout = payout_found(request, payout_id, environment)
    sent = payout_otp_send(payout=payout, by=staff_of(request))
    step = otp_step(Payout.objects.select_related("environment").get(pk=payout_id))
    return 200, OtpSentOut(
        sent_to=sent.sent_to,
        expires_at=sent.expires_at,
        replaced_previous=bool(step and step.codes_sent > 1),
        otp=otp_step_out(step) if step else None,
    )


@router.post("/payouts/{payout_id}/otp/confirm", response={202: PayoutStateOut, **ERRORS})
def otp_confirm(
    request: HttpRequest,
    payout_id: int,
    payload: OtpConfirmIn,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """
    Enter the code: the payout goes `submitting` and is sent by a worker (202). Follow it with
    GET /payouts/{id}/otp: a wrong code brings it back to `approved` and the step to
    `wrong_code` with the tries left. A code that cannot work (never sent, blocked, expired,
    replaced) is refused at once: 400 on `code`, before any upstream call.
    """
    payout = payout_found(request, payout_id, environment)
    return 202, state_out(
        payout_otp_confirm(payout=payout, by=staff_of(request), code=payload.code)
    )


@router.post("/payouts/{payout_id}/cancel", response={200: PayoutStateOut, **ERRORS})
def cancel(
    request: HttpRequest,
    payout_id: int,
    payload: CancelIn | None = None,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Withdraw a payout not yet sent upstream (its maker or an approver)."""
    reason = payload.reason if payload else ""
    payout = payout_found(request, payout_id, environment)
    return 200, state_out(payout_cancel(payout=payout, by=staff_of(request), reason=reason))


@router.post("/payouts/{payout_id}/resend", response={202: PayoutStateOut, **ERRORS})
def resend(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """Re-send a payout stuck in `submitting` now, with the same idempotency key (approvers)."""
    payout = payout_found(request, payout_id, environment)
    return 202, state_out(payout_retry(payout=payout, by=staff_of(request)))


class InboxItemOut(Schema):
    id: int
    amount: Decimal = Field(description="In `currency`.")
    currency: str
    corridor: str = Field(description="Source → destination currency.")
    recipient: str
    rail: str
    maker: str
    submitted_at: datetime | None
    preview_recipient_amount: Decimal | None
    preview_recipient_currency: str
    documents: int
    approvals: int
    approvals_required: int


@router.get("/approvals", response={200: list[InboxItemOut], **ERROR_RESPONSES})
def approvals(
    request: HttpRequest,
    scope: str = SCOPE_MINE,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """My approval inbox (`scope=mine`, default) or every payout waiting (`scope=anyone`)."""
    user = staff_of(request)
    if scope not in (SCOPE_MINE, SCOPE_ANYONE):
        raise ServiceError("scope is mine or anyone.", errors=[("scope", "must be mine or anyone")])
    if not can_read_payouts(user):
        raise PermissionDenied("Not allowed.")
    rows = approval_inbox(user=user, environment=environment_of(request, environment), scope=scope)
    return 200, [
        InboxItemOut(
            id=p.pk,
            amount=p.amount,
            currency=p.currency,
            corridor=p.corridor,
            recipient=p.recipient.display_name,
            rail=p.recipient.account_type,
            maker=p.maker.email,
            submitted_at=p.submitted_at,
            preview_recipient_amount=p.preview_recipient_amount,
            preview_recipient_currency=p.preview_recipient_currency,
            documents=len(p.documents.all()),
            approvals=len(valid_approvals(p)),
            approvals_required=p.approvals_required,
        )
        for p in rows
    ]
