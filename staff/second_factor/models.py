"""Authenticator apps (a django-otp device whose TOTP seed is encrypted at rest), recovery codes
(a django-otp device storing only hashes) and admin resets of a second factor."""

from __future__ import annotations

import hashlib
import secrets
import time
from base64 import b32encode
from urllib.parse import quote, urlencode

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy
from django_otp.models import Device, ThrottlingMixin, TimestampMixin
from django_otp.oath import TOTP

from staff import crypto

# RFC 6238 as every authenticator app reads it: 30-second steps, 6 digits, SHA-1.
TOTP_STEP = 30
TOTP_DIGITS = 6
# Codes one step either side of now are accepted (clock skew, a code typed as it changes).
TOTP_TOLERANCE = 1
TOTP_SEED_BYTES = 20
_THROTTLE_FIELDS = ("throttling_failure_count", "throttling_failure_timestamp")


class CountedThrottle:
    """django-otp's throttle, with each failure counted in the database itself (count + 1 in
    one UPDATE), so concurrent wrong guesses are never lost, even where rows cannot be locked
    (SQLite): each one doubles the wait, as docs/identity.md promises."""

    pk: object

    def throttle_increment(self, commit: bool = True) -> None:
        now = timezone.now()
        type(self)._default_manager.filter(pk=self.pk).update(  # type: ignore[attr-defined]
            throttling_failure_count=models.F("throttling_failure_count") + 1,
            throttling_failure_timestamp=now,
        )
        self.refresh_from_db(fields=list(_THROTTLE_FIELDS))  # type: ignore[attr-defined]


def seed_encrypt(seed: bytes) -> str:
    """The ciphertext stored for a seed: its hex, encrypted with staff.crypto."""
    return crypto.encrypt(seed.hex())


def seed_new_encrypted() -> str:
    """A new random seed (160 bits, as RFC 4226 recommends), encrypted."""
    return seed_encrypt(secrets.token_bytes(TOTP_SEED_BYTES))


class AuthenticatorDevice(TimestampMixin, CountedThrottle, ThrottlingMixin, Device):
    """A person's authenticator app (TOTP). Its seed is stored only as Fernet ciphertext
    (`seed_encrypted`, staff.crypto; `gateway_rotate_key` re-encrypts it with every other
    secret); it is decrypted to check a code and, once, to show it at enrolment.

    `last_t` is the time step of the last accepted code: only a later step is accepted next,
    so a code cannot be used twice. `drift` follows the app's clock (steps ahead or behind).
    """

    seed_encrypted = models.TextField(default=seed_new_encrypted, editable=False)
    drift = models.SmallIntegerField(default=0, editable=False)
    last_t = models.BigIntegerField(default=-1, editable=False)

    class Meta(Device.Meta):
        verbose_name = "authenticator app"

    def __str__(self) -> str:
        return f"{self.name or 'Authenticator app'} of user {self.user_id}"

    @property
    def seed(self) -> bytes:
        """The decrypted seed (raises staff.crypto.SecretDecryptionError without its key)."""
        return bytes.fromhex(crypto.decrypt(self.seed_encrypted))

    def _totp(self) -> TOTP:
        return TOTP(self.seed, step=TOTP_STEP, t0=0, digits=TOTP_DIGITS, drift=self.drift)

    def current_code(self) -> str:
        """The code the app shows now (demo hints; never used to check a code)."""
        return str(self._totp().token()).zfill(TOTP_DIGITS)

    def get_throttle_factor(self) -> int:
        # django-otp's setting for TOTP apps (default 1): after n wrong codes, 2**(n-1) seconds.
        return int(getattr(settings, "OTP_TOTP_THROTTLE_FACTOR", 1))

    def verify_token(self, token: object) -> bool:
        """Whether `token` is the app's code within the tolerance, at a step after the last
        accepted one; a wrong code counts against the throttle. The row is locked while it is
        checked, so two requests racing with one code cannot both pass (PostgreSQL)."""
        with transaction.atomic():
            state = (
                type(self)
                .objects.select_for_update()
                .filter(pk=self.pk)
                .values("last_t", "drift", *_THROTTLE_FIELDS)
                .first()
            )
            for name, value in (state or {}).items():
                setattr(self, name, value)
            return self._verify_locked(str(token).strip())

    def _verify_locked(self, typed: str) -> bool:
        allowed, _ = self.verify_is_allowed()
        if not allowed:
            return False
        totp = self._totp()
        totp.time = time.time()
        accepted = (
            len(typed) == TOTP_DIGITS
            and typed.isdigit()
            and bool(totp.verify(int(typed), tolerance=TOTP_TOLERANCE, min_t=self.last_t + 1))
        )
        if not accepted:
            self.throttle_increment(commit=True)
            return False
        self.last_t = totp.t()
        self.drift = totp.drift
        self.throttle_reset(commit=False)
        self.set_last_used_timestamp(commit=False)
        self.save()
        return True

    @property
    def config_url(self) -> str:
        """The otpauth:// URL an app scans (Key Uri Format), labelled with the issuer."""
        issuer = str(getattr(settings, "OTP_TOTP_ISSUER", "") or "").replace(":", "")
        account = str(self.user.get_username())
        label = f"{issuer}:{account}" if issuer else account
        params = {
            "secret": self.seed_base32(),
            "algorithm": "SHA1",
            "digits": TOTP_DIGITS,
            "period": TOTP_STEP,
        }
        if issuer:
            params["issuer"] = issuer
        return f"otpauth://totp/{quote(label)}?{urlencode(params, quote_via=quote)}"

    def seed_base32(self) -> str:
        return b32encode(self.seed).decode().rstrip("=")


def recovery_code_hash(code: str) -> str:
    """SHA-256 of a recovery code as typed (case, spaces and dashes ignored).

    A code is 60 random bits (recovery.py), so a fast hash is enough: nobody can search that
    space, and the database never holds a usable code (otp_static would keep them in plain text).
    """
    normalised = "".join(ch for ch in code.upper() if ch.isalnum())
    return hashlib.sha256(normalised.encode()).hexdigest()


class RecoveryCodeDevice(TimestampMixin, CountedThrottle, ThrottlingMixin, Device):
    """A person's set of one-time recovery codes, as one django-otp device (one per person)."""

    class Meta(Device.Meta):
        verbose_name = "recovery code set"

    def get_throttle_factor(self) -> int:
        return 1

    def verify_token(self, token: object) -> bool:
        allowed, _ = self.verify_is_allowed()
        if not allowed:
            return False
        digest = recovery_code_hash(str(token))
        used = self.codes.filter(code_hash=digest, used_at__isnull=True).update(
            used_at=timezone.now()
        )
        if used:
            self.throttle_reset(commit=False)
            self.set_last_used_timestamp(commit=False)
            self.save()
            return True
        self.throttle_increment(commit=True)
        return False

    def remaining(self) -> int:
        return self.codes.filter(used_at__isnull=True).count()


class RecoveryCode(models.Model):
    device = models.ForeignKey(RecoveryCodeDevice, on_delete=models.CASCADE, related_name="codes")
    code_hash = models.CharField(max_length=64)
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["device", "code_hash"], name="recovery_code_once")
        ]

    def __str__(self) -> str:
        return f"recovery code of device {self.device_id} ({'used' if self.used_at else 'unused'})"


class SecondFactorReset(models.Model):
    """An admin's request to clear a person's second factor; a second admin confirms it."""

    class Status(models.TextChoices):
        PENDING = "pending", gettext_lazy("Waiting for a second admin")
        APPLIED = "applied", gettext_lazy("Applied")
        CANCELLED = "cancelled", gettext_lazy("Cancelled")

    target = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="second_factor_resets"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    requested_at = models.DateTimeField(default=timezone.now)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    applied_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ("-requested_at", "-id")
        constraints = [
            models.UniqueConstraint(
                fields=["target"],
                condition=models.Q(status="pending"),
                name="one_pending_second_factor_reset",
            )
        ]

    def __str__(self) -> str:
        return f"second-factor reset of {self.target_id} ({self.status})"
