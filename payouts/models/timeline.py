"""A payout's status timeline (every move, its source, who) and the upstream events received."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy

from payouts.models.payout import Payout, PayoutStatus


class ChangeSource(models.TextChoices):
    STAFF = "staff", gettext_lazy("Staff action")
    EVENT = "event", gettext_lazy("Webhook event")
    POLL = "poll", gettext_lazy("Polling")
    SYSTEM = "system", gettext_lazy("System")


class PayoutStatusChange(models.Model):
    """One row of a payout's timeline: every move, where it came from, who and when."""

    payout = models.ForeignKey(Payout, on_delete=models.CASCADE, related_name="status_changes")
    from_status = models.CharField(max_length=20, choices=PayoutStatus.choices, blank=True)
    to_status = models.CharField(max_length=20, choices=PayoutStatus.choices)
    source = models.CharField(max_length=10, choices=ChangeSource.choices)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    reason = models.CharField(max_length=500, blank=True)
    at = models.DateTimeField(default=timezone.now)
    # The upstream event that caused the move, when one did (blank for staff, poll, system).
    event_id = models.CharField(max_length=80, blank=True)
    # When the upstream made the move, by its own clock, when it said (the event's time, the
    # GET's history): `at` is when PayOps learned it. The ledger dates a reversal here.
    upstream_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("at", "pk")

    def __str__(self) -> str:
        return f"{self.from_status or '∅'} → {self.to_status} ({self.source})"


class PayoutEvent(models.Model):
    """
    Every upstream payout event received (or a change found by polling), once per event id: the
    record that makes applying events idempotent. `payout` is empty while the event names an
    upstream id PayOps has not recorded yet (the event came before our initiation's answer).
    """

    environment = models.ForeignKey(
        "gateway.Environment", on_delete=models.PROTECT, related_name="+"
    )
    payout = models.ForeignKey(
        Payout, null=True, blank=True, on_delete=models.CASCADE, related_name="events"
    )
    upstream_id = models.CharField(max_length=64, db_index=True)
    event_id = models.CharField(max_length=80)
    event_type = models.CharField(max_length=60)
    source = models.CharField(max_length=10, choices=ChangeSource.choices)
    status = models.CharField(max_length=20, choices=PayoutStatus.choices)
    applied = models.BooleanField(default=False)
    note = models.CharField(max_length=200, blank=True)
    data = models.JSONField(default=dict, blank=True)
    occurred_at = models.DateTimeField(null=True, blank=True)
    received_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("received_at", "pk")
        constraints = [
            models.UniqueConstraint(
                fields=["environment", "event_id"], name="payout_event_once_per_environment"
            )
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.status} for {self.upstream_id}"
