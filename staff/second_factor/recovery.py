"""Recovery codes: ten one-time codes shown once, stored as SHA-256 hashes (models.py says why)."""

from __future__ import annotations

import secrets

from django.db import transaction

from staff.actions import record_action  # no live page for these records: announce=False
from staff.models import StaffUser
from staff.second_factor.models import RecoveryCode, RecoveryCodeDevice, recovery_code_hash

RECOVERY_CODE_COUNT = 10
# Crockford-like base32 without look-alikes (0/O, 1/I/L): 12 characters are 60 random bits.
_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
_LENGTH = 12


def _new_code() -> str:
    raw = "".join(secrets.choice(_ALPHABET) for _ in range(_LENGTH))
    return f"{raw[:4]}-{raw[4:8]}-{raw[8:]}"


def recovery_codes_issue(*, user: StaffUser, by: StaffUser | None) -> list[str]:
    """Replace the person's recovery codes by ten new ones; the plaintext is returned once only.

    Callers check step-up (a regeneration from the profile) or run right after a first device is
    confirmed (enrolment); the old codes stop working in the same transaction.
    """
    codes = [_new_code() for _ in range(RECOVERY_CODE_COUNT)]
    with transaction.atomic():
        device, _ = RecoveryCodeDevice.objects.select_for_update().get_or_create(
            user=user, defaults={"name": "Recovery codes", "confirmed": True}
        )
        device.codes.all().delete()
        RecoveryCode.objects.bulk_create(
            RecoveryCode(device=device, code_hash=recovery_code_hash(code)) for code in codes
        )
        device.throttle_reset(commit=True)
        record_action(
            actor=by,
            action="staff.recovery_codes_issued",
            target=user,
            details={"count": len(codes)},
            announce=False,
        )
    return codes
