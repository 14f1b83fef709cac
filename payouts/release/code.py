"""The fiat payout OTP: send the code to the environment's verification email, confirm it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from gateway.client import call_sync, upstream
from gateway.errors import (
    AuthenticationError,
    BudgetExhausted,
    TemporaryError,
    UpstreamError,
)
from gateway.service_errors import unanswered
from payouts.approval.services import recipient_payable_refuse
from payouts.errors import PayoutActionRefused
from payouts.models import Payout, PayoutStatus
from payouts.release.initiation import submission_start
from payouts.release.step import OTP_LIFETIME, otp_facts, otp_step_decide
from payouts.states import payout_change_record, payout_locked
from staff.actions import record_action
from staff.models import StaffUser
from staff.roles import PAYOUT_APPROVE
from staff.step_up import proof_of, step_up_require

S = PayoutStatus
OTP_RE = re.compile(r"^[0-9]{6}\Z")  # ASCII only (\d takes any script's digits)


@dataclass(frozen=True)
class OtpSent:
    sent_to: str
    expires_at: datetime


def _may_release(payout: Payout, by: StaffUser) -> None:
    """Sending and entering the code release money: an approver, never the maker."""
    if not by.has_perm(PAYOUT_APPROVE):
        raise PermissionDenied(gettext("Only an approver may send or enter the payout code."))
    if by.pk == payout.maker_id:
        raise PayoutActionRefused(
            "maker", gettext("You prepared this payout; an approver must release it."), status=403
        )
    if payout.mode != "fiat":
        raise PayoutActionRefused(
            "not_fiat", gettext("Only fiat payouts need a verification code.")
        )
    if payout.submitted_upstream:
        raise PayoutActionRefused(
            "already_sent",
            gettext("This payout was already sent to the upstream: nothing to confirm."),
        )
    if payout.status != S.APPROVED:
        raise PayoutActionRefused(
            "not_approved",
            gettext(
                "The code is sent once the payout has all its approvals (this one is %(value)s)."
            )
            % {"value": payout.get_status_display().lower()},
        )
    recipient_payable_refuse(payout)


def payout_otp_send(*, payout: Payout | int, by: StaffUser) -> OtpSent:
    """POST /verification/send to the environment's verification email; resets the try count."""
    pk = payout.pk if isinstance(payout, Payout) else payout
    current = Payout.objects.select_related("environment").get(pk=pk)
    _may_release(current, by)
    email = current.environment.verification_email
    if not email:
        raise PayoutActionRefused(
            "no_verification_email",
            gettext(
                "The environment has no verification email: an admin sets it on the environment."
            ),
            status=400,
        )
    try:
        answer = call_sync(upstream(current.environment).verification.send_otp, email=email)
    except UpstreamError as exc:
        raise otp_send_refusal(exc) from exc
    expires_at = answer.expires_at or timezone.now() + OTP_LIFETIME
    with transaction.atomic():
        locked = payout_locked(pk)
        _may_release(locked, by)
        locked.otp_sent_to = email
        locked.otp_expires_at = expires_at
        locked.otp_failed_attempts = 0  # a new code: the upstream counts its tries afresh
        locked.initiation_error = ""
        locked.save(
            update_fields=[
                "otp_sent_to",
                "otp_expires_at",
                "otp_failed_attempts",
                "initiation_error",
            ]
        )
        payout_change_record(locked, by=by, audit="payout.otp_sent", details={"sent_to": email})
    return OtpSent(sent_to=email, expires_at=expires_at)


def otp_send_refusal(exc: UpstreamError) -> PayoutActionRefused:
    """
    Why no code could be sent, and what to do next, in the API's statuses: 503 when the upstream
    did not answer (after the gateway's own retries: a resend is safe, a new code supersedes the
    previous one), 502 when our credentials are refused, 400 when it refused the request.
    """
    if isinstance(exc, TemporaryError | BudgetExhausted):
        return PayoutActionRefused(
            "upstream_unavailable",
            f"{unanswered(exc)}: the code may not have been sent. Send it again in a minute; if "
            "an earlier email arrives anyway, only the newest code counts.",
            status=503,
        )
    if isinstance(exc, AuthenticationError):
        return PayoutActionRefused(
            "upstream_credentials",
            gettext(
                "PayOps could not sign in to the upstream: an admin must check this environment's "
                "credentials. No code was sent."
            ),
            status=502,
        )
    return PayoutActionRefused(
        "otp_send_refused",
        gettext("The upstream refused to send the code: %(message)s") % {"message": exc.message},
        status=400,
    )


def otp_tries_left(payout: Payout) -> int:
    return max(0, settings.PAYOUTS_OTP_MAX_TRIES - payout.otp_failed_attempts)


def payout_otp_confirm(*, payout: Payout | int, by: StaffUser, code: str) -> Payout:
    """
    Take the 6 digits and send the payout (the upstream checks the code). Refused here, before
    any call, when no code was sent, it has expired, five wrong tries blocked it, or a later
    code replaced it (payouts.release.step).

    Step-up: entering the code releases the money, so an approver needs a fresh second factor
    (`payout.release`), asked before anything else is checked; someone without the approver
    permission is refused as before. Sending the code (payout_otp_send) needs none: it only emails
    the environment's verification address, and the release itself is this confirm.
    """
    if not by.has_perm(PAYOUT_APPROVE):
        raise PermissionDenied(gettext("Only an approver may send or enter the payout code."))
    step_up_require(by, action="payout.release")
    code = (code or "").strip()
    if not OTP_RE.match(code):
        raise PayoutActionRefused(
            "invalid_code", gettext("The code is exactly 6 digits."), field="code", status=400
        )
    with transaction.atomic():
        locked = payout_locked(payout)
        if locked.status == S.SUBMITTING:
            return locked  # a double submit: the first one is on its way
        _may_release(locked, by)
        # Refused before any call when the step says the code cannot work (never sent, blocked,
        # expired, replaced): the same words as the page's step and the API's.
        step = otp_step_decide(otp_facts(locked), now=timezone.now())
        if not step.can_confirm:
            raise PayoutActionRefused(
                step.error_code or "otp_not_sent", step.message, field="code", status=400
            )
        proof = proof_of(by)
        record_action(
            actor=by,
            action="payout.otp_entered",
            target=locked,
            # The second factor behind the release (never the code): the evidence pack shows it.
            details={
                "second_factor_method": proof.second_factor_method if proof else "",
                "second_factor_at": (
                    proof.second_factor_at.isoformat() if proof and proof.second_factor_at else ""
                ),
            },
        )
        submission_start(payout=locked, by=by, otp=code)
    locked.refresh_from_db()
    return locked
