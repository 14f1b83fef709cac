"""Tables of the emulator's edge: API clients, clock, faults, idempotency records, usage."""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models


def money_field(**options: object) -> models.DecimalField[Decimal, Decimal]:
    return models.DecimalField(max_digits=14, decimal_places=2, **options)  # type: ignore[arg-type]


def rate_field(**options: object) -> models.DecimalField[Decimal, Decimal]:
    return models.DecimalField(max_digits=18, decimal_places=6, **options)  # type: ignore[arg-type]


class Environment(models.TextChoices):
    PRODUCTION = "production", "Production"
    SANDBOX = "sandbox", "Sandbox"


class ApiClient(models.Model):
    """Credentials of an integrator, valid in both environments; secrets stored hashed."""

    name = models.CharField(max_length=200)
    client_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    password = models.CharField(max_length=256, help_text="Django password hash")
    # sha256 hex of the API key: lookups by digest, the key itself is shown once at creation.
    api_key_digest = models.CharField(max_length=64, unique=True, editable=False)
    api_key_prefix = models.CharField(max_length=12, editable=False)
    # Limits and fee profile; null means "use the EMULATOR_* setting" so settings stay the default.
    rate_per_second = models.PositiveIntegerField(null=True, blank=True)
    max_concurrent = models.PositiveIntegerField(null=True, blank=True)
    weekly_quota = models.PositiveIntegerField(null=True, blank=True)
    markup_fixed_fee = money_field(default=Decimal("0"))
    markup_percentage_fee = rate_field(default=Decimal("0"))
    markup_fx = rate_field(default=Decimal("0"))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.client_id})"

    @property
    def effective_rate_per_second(self) -> int:
        return self.rate_per_second or int(settings.EMULATOR_RATE_PER_SECOND)

    @property
    def effective_max_concurrent(self) -> int:
        return self.max_concurrent or int(settings.EMULATOR_MAX_CONCURRENT)

    @property
    def effective_weekly_quota(self) -> int:
        return self.weekly_quota or int(settings.EMULATOR_WEEKLY_QUOTA)


class ClockState(models.Model):
    """Singleton (pk=1): how far the emulator's clock runs ahead of real time."""

    offset_seconds = models.FloatField(default=0.0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"clock offset {self.offset_seconds:+.3f}s"


class FaultSettings(models.Model):
    """Singleton (pk=1): faults injected at run time, shared by the control call and the server."""

    latency_ms = models.PositiveIntegerField(default=0)
    error_rate = models.FloatField(default=0.0)
    rate_429 = models.FloatField(default=0.0)
    drop_webhooks = models.FloatField(default=0.0)
    drop_response_next = models.PositiveIntegerField(default=0)
    # The next N API requests (past the limiter) answer 500, whatever error_rate says.
    error_next = models.PositiveIntegerField(default=0)
    # The next N webhook events are stored but never delivered (a dropped event).
    drop_events_next = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "fault settings"

    def __str__(self) -> str:
        return "fault settings"


class IdempotencyRecord(models.Model):
    """A mutation's first outcome, replayed for the same key and body (see emulator.idempotency)."""

    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="+")
    environment = models.CharField(max_length=10, choices=Environment.choices)
    scope = models.CharField(max_length=200)
    key = models.CharField(max_length=255)
    request_digest = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(default=0)
    response_body = models.JSONField(default=dict)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["client", "environment", "scope", "key"], name="emulator_idem_unique_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.scope} {self.key}"


class WeeklyUsage(models.Model):
    """Requests admitted per API client and ISO week (emulator clock), for the weekly quota."""

    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="+")
    week = models.CharField(max_length=8, help_text="ISO week, e.g. 2026-W48")
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["client", "week"], name="emulator_usage_unique_week")
        ]

    def __str__(self) -> str:
        return f"{self.client_id} {self.week}: {self.count}"
