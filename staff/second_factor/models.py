"""Recovery codes (a django-otp device storing only hashes) and admin resets of a second factor."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.utils import timezone
from django_otp.models import Device, ThrottlingMixin, TimestampMixin


def recovery_code_hash(code: str) -> str:
    """SHA-256 of a recovery code as typed (case, spaces and dashes ignored).

    A code is 60 random bits (recovery.py), so a fast hash is enough: nobody can search that
    space, and the database never holds a usable code (otp_static would keep them in plain text).
    """
    normalised = "".join(ch for ch in code.upper() if ch.isalnum())
    return hashlib.sha256(normalised.encode()).hexdigest()


class RecoveryCodeDevice(TimestampMixin, ThrottlingMixin, Device):
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
        PENDING = "pending", "Waiting for a second admin"
        APPLIED = "applied", "Applied"
        CANCELLED = "cancelled", "Cancelled"

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
