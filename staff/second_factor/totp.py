"""Authenticator apps (TOTP): a pending device, its QR code (SVG, drawn here) and confirmation."""

from __future__ import annotations

from base64 import b32encode

import segno
from django.db import transaction
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from staff.models import StaffUser


def totp_pending(user: StaffUser) -> TOTPDevice:
    """The person's unconfirmed authenticator app being set up (one at a time; made if none)."""
    with transaction.atomic():
        device = (
            TOTPDevice.objects.select_for_update()
            .filter(user=user, confirmed=False)
            .order_by("-id")
            .first()
        )
        if device is None:
            device = TOTPDevice.objects.create(user=user, name="Authenticator app", confirmed=False)
    return device


def totp_secret(device: TOTPDevice) -> str:
    """The secret as an app's manual entry wants it: base32, in groups of four."""
    raw = b32encode(device.bin_key).decode().rstrip("=")
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def totp_qr_svg(device: TOTPDevice) -> str:
    """The otpauth:// URL as an inline SVG QR code (no script, no style: CSP-safe)."""
    return str(segno.make(device.config_url, error="m").svg_inline(scale=4, dark="#111"))


def totp_current_code(device: TOTPDevice) -> str:
    """The code the device's app shows now (the demo hint; never used to check a code)."""
    value = totp(device.bin_key, step=device.step, t0=device.t0, digits=device.digits)
    return str(value).zfill(device.digits)
