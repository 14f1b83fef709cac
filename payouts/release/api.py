"""Release endpoints: the code step (read, send, confirm), re-sending a payout stuck upstream."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext
from ninja import Field, Router, Schema

from console.api_permissions import needs
from console.inputs import Text
from gateway.api_support import EnvironmentName
from payouts.api_support import (
    ERRORS,
    OtpStepOut,
    PayoutStateOut,
    otp_step_out,
    payout_action,
    payout_found,
    state_out,
)
from payouts.errors import PayoutActionRefused
from payouts.models import Payout
from payouts.release.code import payout_otp_confirm, payout_otp_send
from payouts.release.initiation import payout_retry
from payouts.release.step import otp_step
from payouts.selectors import require_payout_reader
from quotes.api import staff_of
from staff import roles

router = Router(tags=["approvals"])


class OtpSentOut(Schema):
    sent_to: str = Field(description="The environment's verification email.")
    expires_at: datetime = Field(description="When the code stops working (upstream's clock).")
    replaced_previous: bool = Field(
        description="True when an earlier code of this payout was replaced: it no longer works."
    )
    otp: OtpStepOut | None = Field(description="The release step after sending (tries reset).")


class OtpConfirmIn(Schema):
    code: Text = Field(description="The 6 digits from the verification email.")


@router.get(
    "/payouts/{payout_id}/otp",
    response={200: OtpStepOut, **ERRORS},
    operation_id="payouts_approvals_api_otp_state",
)
@needs(roles.FINANCE_VIEW, roles.COMPLIANCE_VIEW)
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
            gettext(
                "This payout needs no code now: only an approved fiat payout not yet sent has "
                "one (this one is %(value)s, %(mode)s)."
            )
            % {"value": payout.get_status_display().lower(), "mode": payout.mode},
        )
    return 200, otp_step_out(step)


@router.post(
    "/payouts/{payout_id}/otp/send",
    response={200: OtpSentOut, **ERRORS},
    operation_id="payouts_approvals_api_otp_send",
)
@needs(roles.PAYOUT_APPROVE)
def otp_send(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """
    Send the verification code of an approved fiat payout to the environment's email. Sending
    again sends a new code that replaces the previous one (which stops working) and resets the
    tries.
    """
    sent = payout_action(request, payout_id, environment, payout_otp_send)
    step = otp_step(Payout.objects.select_related("environment").get(pk=payout_id))
    return 200, OtpSentOut(
        sent_to=sent.sent_to,
        expires_at=sent.expires_at,
        replaced_previous=bool(step and step.codes_sent > 1),
        otp=otp_step_out(step) if step else None,
    )


@router.post(
    "/payouts/{payout_id}/otp/confirm",
    response={202: PayoutStateOut, **ERRORS},
    operation_id="payouts_approvals_api_otp_confirm",
)
@needs(roles.PAYOUT_APPROVE)
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
    payout = payout_action(request, payout_id, environment, payout_otp_confirm, code=payload.code)
    return 202, state_out(payout)


@router.post(
    "/payouts/{payout_id}/resend",
    response={202: PayoutStateOut, **ERRORS},
    operation_id="payouts_approvals_api_resend",
)
@needs(roles.PAYOUT_APPROVE)
def resend(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """Re-send a payout stuck in `submitting` now, with the same idempotency key (approvers)."""
    return 202, state_out(payout_action(request, payout_id, environment, payout_retry))
