"""What the payout endpoints share: the payout of the request (or 404), a service acting on it,
its state as answered."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.http import Http404, HttpRequest
from ninja import Field, Schema

from console.api_schemas import ERROR_RESPONSES, ErrorOut
from gateway.api_support import acting_staff
from payouts import selectors
from payouts.api_out import UpstreamWaitOut, payout_out, upstream_wait_out
from payouts.approval.selectors import valid_approvals
from payouts.models import Payout
from payouts.release.code import otp_tries_left
from payouts.release.step import OtpStep, otp_step
from quotes.api import environment_of

# What an action on one payout may answer besides success (a state conflict, the upstream).
ERRORS: dict[int, Any] = {**ERROR_RESPONSES, 409: ErrorOut, 502: ErrorOut, 503: ErrorOut}


def payout_found(request: HttpRequest, payout_id: int, environment: str | None) -> Payout:
    """The payout in the request's environment (`?environment=` or the caller's), else 404."""
    try:
        return selectors.payout_detail(
            environment=environment_of(request, environment), pk=payout_id
        )
    except Payout.DoesNotExist:
        raise Http404("No such payout in this environment.") from None


def payout_action[R](
    request: HttpRequest,
    payout_id: int,
    environment: str | None,
    action: Callable[..., R],
    **values: Any,
) -> R:
    """`action`, a payout service, on the request's payout (404 when it is not in the request's
    environment), by the caller, with `values`; its answer."""
    payout = payout_found(request, payout_id, environment)
    return action(payout=payout, by=acting_staff(request), **values)


def payout_fresh(request: HttpRequest, payout_id: int, environment: str | None) -> dict[str, Any]:
    """The payout as it now stands, re-read with its documents and timeline."""
    return payout_out(payout_found(request, payout_id, environment))


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
    """The step as answered: each field of the schema is the step's attribute of that name."""
    return OtpStepOut.model_validate(step)


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
