"""Webhook endpoints (per environment), raw deliveries, events, processing attempts and gaps."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy

from gateway.models import Environment
from staff import crypto


def _decrypted(ciphertext: str) -> str:
    return crypto.decrypt(ciphertext) if ciphertext else ""


class WebhookEndpoint(models.Model):
    """
    Where one environment's upstream pushes events, and the secrets it signs them with.

    The receiver path carries a random UUID so it cannot be guessed. Secrets are stored encrypted
    (staff.crypto; the `_encrypted` suffix also enrols them in `gateway_rotate_key`). A rotation
    first stores the new secret as *pending* (accepted from that moment, since the upstream may
    sign with it as soon as it accepts the registration), then, once the upstream has accepted it,
    makes it current and keeps the old one as *previous* until `previous_valid_until`.
    """

    environment = models.OneToOneField(
        Environment, on_delete=models.CASCADE, related_name="webhook_endpoint"
    )
    receiver_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    secret_encrypted = models.TextField(blank=True)
    secret_set_at = models.DateTimeField(null=True, blank=True)
    previous_secret_encrypted = models.TextField(blank=True)
    previous_secret_set_at = models.DateTimeField(null=True, blank=True)
    previous_valid_until = models.DateTimeField(null=True, blank=True)
    pending_secret_encrypted = models.TextField(blank=True)
    pending_since = models.DateTimeField(null=True, blank=True)
    registered_url = models.URLField(max_length=500, blank=True)
    registered_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    # Invalid deliveries past WEBHOOKS_INVALID_DELIVERIES_PER_HOUR are counted here, not stored.
    invalid_not_stored = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("environment__name",)
        permissions = [
            ("view_webhook_events", "Can view webhook events and deliveries"),
            ("manage_webhooks", "Can register and rotate webhooks and reprocess events"),
        ]

    def __str__(self) -> str:
        return f"Webhook endpoint of {self.environment.name}"

    # Decrypted secrets: only the receiver, the services and the operator command read these.
    @property
    def secret(self) -> str:
        return _decrypted(self.secret_encrypted)

    @property
    def previous_secret(self) -> str:
        return _decrypted(self.previous_secret_encrypted)

    @property
    def pending_secret(self) -> str:
        return _decrypted(self.pending_secret_encrypted)

    def previous_accepted(self, now: datetime | None = None) -> bool:
        now = now or timezone.now()
        return bool(
            self.previous_secret_encrypted
            and self.previous_valid_until
            and now <= self.previous_valid_until
        )


class SignatureVerdict(models.TextChoices):
    VALID = "valid", gettext_lazy("Valid")
    INVALID = "invalid", gettext_lazy("Invalid signature")
    MISSING = "missing", gettext_lazy("Missing signature")
    MALFORMED = "malformed", gettext_lazy("Malformed body")
    TOO_LARGE = "too_large", gettext_lazy("Body too large")
    NO_SECRET = "no_secret", gettext_lazy("No secret configured")


class SecretSlot(models.TextChoices):
    CURRENT = "current", gettext_lazy("Current")
    PREVIOUS = "previous", gettext_lazy("Previous (overlap window)")
    PENDING = "pending", gettext_lazy("Pending (rotation in progress)")


class SignedOver(models.TextChoices):
    RAW = "raw", gettext_lazy("Raw bytes")
    RESERIALISED = "reserialised", gettext_lazy("Re-serialised (JSON.stringify)")


class EventStatus(models.TextChoices):
    PENDING = "pending", gettext_lazy("Pending")
    PROCESSED = "processed", gettext_lazy("Processed")
    FAILED = "failed", gettext_lazy("Failed")
    UNHANDLED = "unhandled", gettext_lazy("Unhandled (unknown type)")
    NO_HANDLER = "no_handler", gettext_lazy("No handler yet")


class WebhookEvent(models.Model):
    """One upstream event, stored once per (environment, event_id): the only copy there is."""

    environment = models.ForeignKey(Environment, on_delete=models.PROTECT, related_name="+")
    event_id = models.CharField(max_length=100)
    event_type = models.CharField(max_length=100, db_index=True)
    payload = models.JSONField(help_text="The whole envelope as parsed.")
    status = models.CharField(
        max_length=20, choices=EventStatus.choices, default=EventStatus.PENDING, db_index=True
    )
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)
    received_at = models.DateTimeField(default=timezone.now, db_index=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    # Contract drift: [{"kind": "unknown_event_type"|"unknown_status"|"unexpected_field", ...}].
    drift = models.JSONField(default=list, blank=True)
    has_drift = models.BooleanField(default=False, db_index=True)
    # Every upstream id found in the payload, space-separated, so a search by any id is one filter.
    object_ids = models.TextField(blank=True)
    delivery_count = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ("-received_at", "-id")
        constraints = [
            models.UniqueConstraint(
                fields=["environment", "event_id"], name="webhook_event_once_per_environment"
            )
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.event_id}"

    @property
    def data(self) -> dict:
        data = self.payload.get("data") if isinstance(self.payload, dict) else None
        return data if isinstance(data, dict) else {}


class WebhookDelivery(models.Model):
    """One HTTP request to a receiver path, stored raw before it is answered (secrets left out)."""

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.ForeignKey(
        WebhookEvent, null=True, blank=True, on_delete=models.SET_NULL, related_name="deliveries"
    )
    received_at = models.DateTimeField(default=timezone.now, db_index=True)
    headers = models.JSONField(default=dict)
    body = models.BinaryField()
    body_truncated = models.BooleanField(default=False)
    body_size = models.PositiveIntegerField(default=0)
    verdict = models.CharField(max_length=20, choices=SignatureVerdict.choices, db_index=True)
    matched_secret = models.CharField(max_length=20, choices=SecretSlot.choices, blank=True)
    signed_over = models.CharField(max_length=20, choices=SignedOver.choices, blank=True)
    signature = models.CharField(max_length=200, blank=True)
    reason = models.CharField(max_length=200, blank=True)
    response_status = models.PositiveSmallIntegerField()
    duplicate = models.BooleanField(default=False)
    duration_ms = models.FloatField(default=0)

    class Meta:
        ordering = ("-received_at", "-id")
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"Delivery {self.pk} ({self.verdict}, {self.response_status})"


class ProcessingOutcome(models.TextChoices):
    PROCESSED = "processed", gettext_lazy("Processed")
    FAILED = "failed", gettext_lazy("Failed")
    NO_HANDLER = "no_handler", gettext_lazy("No handler yet")
    UNHANDLED = "unhandled", gettext_lazy("Unhandled")


class ProcessingAttempt(models.Model):
    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField(default=timezone.now)
    duration_ms = models.FloatField(default=0)
    outcome = models.CharField(max_length=20, choices=ProcessingOutcome.choices)
    error = models.TextField(blank=True)
    trigger = models.CharField(max_length=30, default="receipt")

    class Meta:
        ordering = ("event", "number")

    def __str__(self) -> str:
        return f"Attempt {self.number} of event {self.event_id}: {self.outcome}"


class WebhookEventLink(models.Model):
    """An object an event touched or names: its upstream id always, the local row when known."""

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="links")
    kind = models.CharField(max_length=40)  # user, virtual_account, payout, recipient, quote, ...
    upstream_id = models.CharField(max_length=100, db_index=True)
    content_type = models.ForeignKey(
        ContentType, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    object_pk = models.CharField(max_length=64, blank=True)
    touched = models.BooleanField(default=False, help_text="Changed by applying the event.")

    class Meta:
        ordering = ("event", "kind")
        constraints = [
            models.UniqueConstraint(
                fields=["event", "kind", "upstream_id"], name="webhook_link_once_per_object"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.upstream_id}"


class MissedEvent(models.Model):
    """A state change PayOps found by refresh or poll with no event that announced it."""

    environment = models.ForeignKey(Environment, on_delete=models.CASCADE, related_name="+")
    object_kind = models.CharField(max_length=40)
    upstream_id = models.CharField(max_length=100, db_index=True)
    expected_event = models.CharField(max_length=100, blank=True)
    previous_state = models.CharField(max_length=100, blank=True)
    observed_state = models.CharField(max_length=100)
    source = models.CharField(max_length=100)
    detected_at = models.DateTimeField(default=timezone.now, db_index=True)
    matched_event = models.ForeignKey(
        WebhookEvent, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ("-detected_at", "-id")

    def __str__(self) -> str:
        return f"Missed {self.object_kind} {self.upstream_id} -> {self.observed_state}"


class ReprocessRun(models.Model):
    """A staff-started re-run of a set of events, with its progress."""

    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        "staff.StaffUser", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    description = models.CharField(max_length=300)
    event_ids = models.JSONField(default=list)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"Reprocess run {self.pk} ({self.done}/{self.total})"

    @property
    def percent(self) -> int:
        return 100 if not self.total else int(100 * self.done / self.total)
