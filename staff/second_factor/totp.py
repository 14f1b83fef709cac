"""Authenticator apps (TOTP): a pending device, its QR code (SVG, drawn here) and confirmation.

The seed is stored encrypted (staff.second_factor.models.AuthenticatorDevice); it is shown only
on the enrolment page of a pending device, for manual entry and in the QR code.
"""

from __future__ import annotations

import segno
from django.db import transaction

from staff.models import StaffUser
from staff.second_factor.models import AuthenticatorDevice


def totp_pending(user: StaffUser) -> AuthenticatorDevice:
    """The person's unconfirmed authenticator app being set up (one at a time; made if none)."""
    with transaction.atomic():
        device = (
            AuthenticatorDevice.objects.select_for_update()
            .filter(user=user, confirmed=False)
            .order_by("-id")
            .first()
        )
        if device is None:
            device = AuthenticatorDevice.objects.create(
                user=user, name="Authenticator app", confirmed=False
            )
    return device


def totp_secret(device: AuthenticatorDevice) -> str:
    """The secret as an app's manual entry wants it: base32, in groups of four."""
    raw = device.seed_base32()
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def totp_qr_svg(device: AuthenticatorDevice) -> str:
    """The otpauth:// URL as an inline SVG QR code (no script, no style: CSP-safe)."""
    return str(segno.make(device.config_url, error="m").svg_inline(scale=4, dark="#111"))


def totp_current_code(device: AuthenticatorDevice) -> str:
    """The code the device's app shows now (the demo hint; never used to check a code)."""
    return device.current_code()
