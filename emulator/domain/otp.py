"""One-time codes for fiat payouts: sending (to the emulator's mailbox) and checking them."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F

from emulator import clock
from emulator.database import EMULATOR_DB
from emulator.domain.formats import EMAIL_RE, iso, validation_error
from emulator.errors import resource_error
from emulator.models import ApiClient, MailboxMessage, OtpCode

OTP_LIFETIME = timedelta(minutes=10)
MAX_FAILED_ATTEMPTS = 5
OTP_RE = re.compile(r"^\d{6}$")


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def otp_send(*, client: ApiClient, environment: str, email: Any) -> dict[str, Any]:
    """A new 6-digit code for the client, valid 10 minutes; earlier unused codes stop counting."""
    if not isinstance(email, str) or not EMAIL_RE.match(email.strip()):
        raise validation_error([("email", "must be a valid e-mail address")])
    email = email.strip()
    code = f"{secrets.randbelow(1_000_000):06d}"
    now = clock.now()
    expires_at = now + OTP_LIFETIME
    with transaction.atomic(using=EMULATOR_DB):
        OtpCode.objects.filter(
            client=client, environment=environment, consumed_at__isnull=True, superseded=False
        ).update(superseded=True)
        OtpCode.objects.create(
            client=client,
            environment=environment,
            email=email,
            code_digest=_digest(code),
            expires_at=expires_at,
            created_at=now,
        )
        MailboxMessage.objects.create(
            environment=environment,
            email=email,
            subject="Your payout verification code",
            body=f"Your verification code is {code}. It expires in 10 minutes.",
            code=code,
            created_at=now,
        )
    return {
        "success": True,
        "message": "Verification code sent",
        "expiresAt": iso(expires_at),
    }


def otp_check(*, client: ApiClient, environment: str, code: str | None) -> OtpCode:
    """Checks the code against the client's current one, in its own transaction.

    A wrong code is counted even though the payout is refused, so this runs (and commits) before
    the payout's own transaction; the code is consumed by `otp_consume` with the payout.
    """
    if not code:
        raise resource_error(
            400,
            "OTP_REQUIRED",
            "A verification code is required for fiat payouts",
            [("x-validation-header", "is required")],
        )
    if not OTP_RE.match(code):
        raise resource_error(
            400, "INVALID_OTP", "Invalid verification code", [("x-validation-header", "6 digits")]
        )
    with transaction.atomic(using=EMULATOR_DB):
        otp = (
            OtpCode.objects.select_for_update()
            .filter(client=client, environment=environment, superseded=False)
            .filter(consumed_at__isnull=True)
            .order_by("-created_at", "-id")
            .first()
        )
        if otp is None:
            raise resource_error(
                400,
                "OTP_REQUIRED",
                "No verification code is pending; send one with POST /verification/send",
                [("x-validation-header", "no pending code")],
            )
        if otp.failed_attempts >= MAX_FAILED_ATTEMPTS:
            raise resource_error(
                400,
                "OTP_BLOCKED",
                "Too many wrong codes; send a new one",
                [("x-validation-header", "blocked")],
            )
        if clock.now() >= otp.expires_at:
            raise resource_error(
                400,
                "OTP_EXPIRED",
                "Verification code expired",
                [("x-validation-header", "expired")],
            )
        if not hmac.compare_digest(otp.code_digest, _digest(code)):
            OtpCode.objects.filter(pk=otp.pk).update(failed_attempts=F("failed_attempts") + 1)
            wrong = True
        else:
            wrong = False
    if wrong:
        raise resource_error(
            400, "INVALID_OTP", "Invalid verification code", [("x-validation-header", "wrong code")]
        )
    return otp


def otp_consume(otp: OtpCode) -> None:
    """Marks the checked code used, inside the payout's transaction; a race loses with a 400."""
    used = OtpCode.objects.filter(pk=otp.pk, consumed_at__isnull=True, superseded=False).update(
        consumed_at=clock.now()
    )
    if not used:
        raise resource_error(
            400,
            "OTP_REQUIRED",
            "The verification code was already used",
            [("x-validation-header", "already used")],
        )


def mailbox(*, email: str) -> list[dict[str, Any]]:
    messages = MailboxMessage.objects.filter(email__iexact=email.strip()).order_by(
        "-created_at", "-id"
    )
    return [
        {
            "email": message.email,
            "environment": message.environment,
            "subject": message.subject,
            "body": message.body,
            "code": message.code,
            "created_at": iso(message.created_at),
        }
        for message in messages
    ]
