"""Alert rules, the alerts they open (one open per rule and subject), deliveries, subscriptions."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from console.sentences import Summary
from gateway.models import Environment


class Severity(models.TextChoices):
    INFO = "info", _("Info")
    WARNING = "warning", _("Warning")
    CRITICAL = "critical", _("Critical")


class AlertRule(models.Model):
    """
    One condition to watch (`kind`, from the registry in `alerts.conditions`) with its thresholds,
    in one environment (or all of them), and where its alerts go besides the subscribers' email.

    The alerts app's permissions are declared here, on its first model.
    """

    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=40)
    # The kind's thresholds, validated by the kind's specification (alerts.conditions).
    thresholds = models.JSONField(default=dict, blank=True)
    environment = models.ForeignKey(
        Environment, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    severity = models.CharField(max_length=10, choices=Severity.choices, default=Severity.WARNING)
    enabled = models.BooleanField(default=True)
    # A Slack-compatible incoming webhook (a secret: encrypted with staff.crypto, never shown).
    webhook_url_encrypted = models.TextField(blank=True, default="")
    webhook_url_hint = models.CharField(max_length=80, blank=True, default="")
    created_by = models.ForeignKey(  # empty: the system (the default rules at first start)
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", null=True, blank=True
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("name", "pk")
        permissions = [
            ("manage_alerts", "Can create and change alert rules and their webhook destinations"),
            ("view_alerts", "Can read alert rules and the alert history, and subscribe"),
            ("acknowledge_alerts", "Can acknowledge an alert"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def display_name(self) -> str:
        """The name people read: a rule the system made at bootstrap (alerts.bootstrap) is
        named by its kind's label, so it reads in the reader's language while its stored name
        is still the default; a name a person wrote, or changed, as written."""
        from alerts.conditions import CONDITIONS

        condition = CONDITIONS.get(self.kind)
        if condition is None or self.created_by_id is not None:
            return self.name
        with translation.override(settings.LANGUAGE_CODE):
            default = str(condition.label)
        with translation.override(None):
            english = str(condition.label)
        return str(condition.label) if self.name in (default, english) else self.name

    @property
    def kind_label(self) -> str:
        from alerts.conditions import CONDITIONS

        condition = CONDITIONS.get(self.kind)
        return str(condition.label) if condition else self.kind

    @property
    def threshold_items(self) -> list[tuple[str, Any]]:
        """The thresholds as a person reads them: each one's label (translated) and value, in the
        kind's order; a name the kind does not know (an old rule's) as it is stored."""
        from alerts.conditions import CONDITIONS

        condition = CONDITIONS.get(self.kind)
        labels = {t.name: str(t.label) for t in condition.thresholds} if condition else {}
        known = [
            (labels[name], self.thresholds[name]) for name in labels if name in self.thresholds
        ]
        rest = [(name, value) for name, value in self.thresholds.items() if name not in labels]
        return known + rest

    @property
    def has_webhook(self) -> bool:
        return bool(self.webhook_url_encrypted)

    def snapshot(self) -> dict[str, Any]:
        """The fields a rule change may change, for the audit entry's before and after."""
        return {
            "name": self.name,
            "kind": self.kind,
            "thresholds": dict(self.thresholds),
            "environment": self.environment.name if self.environment else None,
            "severity": self.severity,
            "enabled": self.enabled,
            "webhook": self.webhook_url_hint,
        }


class AlertState(models.TextChoices):
    # In context: "Open" and "Resolved" are other apps' words too (reconciliation runs and
    # exceptions), translated for their own nouns; the root catalog's would win over these.
    OPEN = "open", pgettext_lazy("alert state", "Open")
    RESOLVED = "resolved", pgettext_lazy("alert state", "Resolved")


class Alert(models.Model):
    """A rule's condition true of one subject (a payout, an environment, an account) for a while."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="alerts")
    subject = models.CharField(max_length=200)
    # The environment the subject is in (an environment's or a payout's; none for an account),
    # whatever the rule's scope: what the history and the dashboard name beside the alert.
    environment = models.ForeignKey(
        Environment, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The record, in English (audit, logs, search); people read `summary_text()`.
    summary = models.CharField(max_length=500)
    # The same summary as a message and its parameters (alerts.summaries), translated when read;
    # null for alerts opened before it existed or fired with a plain text.
    summary_message = models.JSONField(null=True, blank=True)
    state = models.CharField(max_length=10, choices=AlertState.choices, default=AlertState.OPEN)
    opened_at = models.DateTimeField(default=timezone.now, db_index=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        ordering = ("-opened_at", "-pk")
        constraints = [
            # Exactly one open alert per rule and subject, even with two evaluators at once.
            models.UniqueConstraint(
                fields=["rule", "subject"],
                condition=Q(state="open"),
                name="alerts_one_open_per_rule_subject",
            )
        ]
        indexes = [models.Index(fields=["state", "opened_at"])]

    def __str__(self) -> str:
        return f"{self.rule.name}: {self.subject}"

    def summary_text(self) -> str:
        """The summary in the active language; the stored English text for an old alert, or a
        message the active language's catalogs do not know."""
        message = Summary.from_json(self.summary_message)
        return self.summary if message is None else message.render(fallback=self.summary)


class DeliveryEvent(models.TextChoices):
    FIRED = "fired", _("Fired")
    RESOLVED = "resolved", pgettext_lazy("alert state", "Resolved")


class DeliveryChannel(models.TextChoices):
    EMAIL = "email", _("Email")
    WEBHOOK = "webhook", _("Webhook")


class DeliveryState(models.TextChoices):
    # In context: a delivery (una entrega, a entrega) is feminine; a payout's "Sent" is not.
    PENDING = "pending", _("Pending")
    SENT = "sent", pgettext_lazy("alert delivery state", "Sent")
    FAILED = "failed", pgettext_lazy("alert delivery state", "Failed")


class AlertDelivery(models.Model):
    """One message of one alert's event to one target: an email address or the rule's webhook."""

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=10, choices=DeliveryEvent.choices)
    channel = models.CharField(max_length=10, choices=DeliveryChannel.choices)
    # The recipient's user id for email ("user:12"), "rule-webhook" for the rule's webhook.
    target = models.CharField(max_length=60)
    state = models.CharField(
        max_length=10, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    last_error = models.CharField(max_length=300, blank=True, default="")
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("pk",)
        constraints = [
            models.UniqueConstraint(
                fields=["alert", "event", "channel", "target"], name="alerts_delivery_once"
            )
        ]
        indexes = [models.Index(fields=["state", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"{self.alert_id} {self.event} {self.channel} {self.target}"


class SubscriptionMode(models.TextChoices):
    IMMEDIATE = "immediate", _("Immediately")
    DIGEST = "digest", _("In a daily digest")


class AlertSubscription(models.Model):
    """A person's choice that a rule's alerts reach them by email, at once or in the digest."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="alert_subscriptions"
    )
    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="subscriptions")
    mode = models.CharField(max_length=10, choices=SubscriptionMode.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "rule"], name="alerts_one_subscription")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.rule_id} {self.mode}"


class DigestSent(models.Model):
    """The daily digest a person was sent (one per person per day, even if the schedule reruns)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    alerts = models.PositiveIntegerField()
    sent_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "day"], name="alerts_digest_once")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.day}"
