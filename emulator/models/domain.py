"""Domain records of the emulator: quotes, users, accounts, recipients, OTPs, payouts, webhooks."""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.db import models

from emulator.models.edge import ApiClient, Environment, money_field, rate_field


class ClientRecord(models.Model):
    """A record of one API client in one environment (the upstream keeps the two apart)."""

    client = models.ForeignKey("emulator.ApiClient", on_delete=models.CASCADE, related_name="+")
    environment = models.CharField(max_length=16, choices=Environment.choices)

    class Meta:
        abstract = True


class QuoteStatus(models.TextChoices):
    ACTIVE = "ACTIVE", "Active"
    EXPIRED = "EXPIRED", "Expired"
    USED = "USED", "Used"


class Quote(models.Model):
    """A priced quotation, locked for its lifetime; EXPIRED is applied lazily when read."""

    quote_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="quotes")
    environment = models.CharField(max_length=10, choices=Environment.choices)
    status = models.CharField(max_length=8, choices=QuoteStatus.choices, default=QuoteStatus.ACTIVE)
    base_currency = models.CharField(max_length=4)
    quote_currency = models.CharField(max_length=4)
    account_type = models.CharField(max_length=8)
    network = models.CharField(max_length=16, blank=True, default="")
    amount_in_destination = models.BooleanField(default=False)
    requested_amount = money_field()
    base_amount = money_field()
    quote_amount = money_field()
    rate = rate_field()
    service_rate = rate_field()
    base_fixed_fee = money_field()
    base_percentage_fee = rate_field()
    base_fx_markup = rate_field()
    client_fixed_fee = money_field()
    client_percentage_fee = rate_field()
    client_fx_markup = rate_field()
    network_fee = money_field()
    penalty_markup = rate_field()
    total_fees = money_field()
    lifetime_seconds = models.PositiveIntegerField(default=600)
    source = models.CharField(max_length=16, default="quotation")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["client", "environment", "status"])]

    def __str__(self) -> str:
        return f"{self.base_currency}->{self.quote_currency} {self.quote_id}"


class EmulatedUser(ClientRecord):
    """An end user of an API client, with the verification state the upstream keeps."""

    user_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    type = models.CharField(max_length=32)
    email = models.EmailField()
    phone = models.CharField(max_length=32, blank=True)
    first_name = models.CharField(max_length=100, blank=True)
    last_name = models.CharField(max_length=100, blank=True)
    country = models.CharField(max_length=2, blank=True)
    status = models.CharField(max_length=16, default="unverified")
    verification_status = models.CharField(max_length=16, default="not_started")
    verification_mode = models.CharField(max_length=16, default="automatic")
    kyc_type = models.CharField(max_length=16, default="full")
    requires_reverification = models.BooleanField(default=False)
    rejection_reasons = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["client", "environment", "email"])]

    def __str__(self) -> str:
        return f"{self.email} ({self.environment})"


class VirtualAccount(ClientRecord):
    """A US_BANK account holding a user's USD; its balance funds fiat payouts."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(EmulatedUser, on_delete=models.CASCADE, related_name="accounts")
    type = models.CharField(max_length=16, default="US_BANK")
    bank = models.CharField(max_length=64)
    mode = models.CharField(max_length=8, default="fiat")
    status = models.CharField(max_length=16, default="activating")
    account_number = models.CharField(max_length=32, blank=True, default="")
    routing_number = models.CharField(max_length=16, blank=True, default="")
    currency = models.CharField(max_length=3, default="USD")
    balance = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal("0.00"))
    activate_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(balance__gte=0), name="emulator_va_balance_not_negative"
            )
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"


class Recipient(ClientRecord):
    """A payee's bank account; payouts go to WIRE or SWIFT recipients."""

    recipient_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(EmulatedUser, on_delete=models.CASCADE, related_name="recipients")
    first_name = models.CharField(max_length=100, blank=True)
    last_name = models.CharField(max_length=100, blank=True)
    company_name = models.CharField(max_length=200, blank=True)
    email = models.EmailField(blank=True)
    address = models.JSONField(default=dict, blank=True)
    account_type = models.CharField(max_length=16)
    account_number = models.CharField(max_length=64)
    routing_number = models.CharField(max_length=32, blank=True)
    swift_code = models.CharField(max_length=16, blank=True)
    bank_name = models.CharField(max_length=200, blank=True)
    currency = models.CharField(max_length=3, default="USD")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.recipient_id} ({self.account_type})"


class OtpCode(ClientRecord):
    """A one-time code for fiat payouts; only its digest is kept, the mailbox holds the text."""

    email = models.EmailField()
    code_digest = models.CharField(max_length=64)
    expires_at = models.DateTimeField()
    failed_attempts = models.PositiveSmallIntegerField(default=0)
    consumed_at = models.DateTimeField(null=True, blank=True)
    superseded = models.BooleanField(default=False)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"OTP for {self.email} ({self.environment})"


class MailboxMessage(models.Model):
    """A message the emulator 'sent' by e-mail (OTP codes), readable through /_control/mailbox."""

    environment = models.CharField(max_length=16, choices=Environment.choices)
    email = models.EmailField()
    subject = models.CharField(max_length=200)
    body = models.TextField()
    code = models.CharField(max_length=6, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["email", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.email}: {self.subject}"


class Payout(ClientRecord):
    """A payout from a virtual account to a recipient, walking the states of decisions.md 3."""

    payout_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    virtual_account = models.ForeignKey(
        VirtualAccount, on_delete=models.PROTECT, related_name="payouts"
    )
    recipient = models.ForeignKey(Recipient, on_delete=models.PROTECT, related_name="payouts")
    mode = models.CharField(max_length=8)
    status = models.CharField(max_length=16, default="CREATED")
    # The statuses this payout will walk through, fixed at creation (sandbox cents outcomes).
    plan = models.JSONField(default=list)
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3, default="USD")
    fees = models.JSONField(default=dict)
    total_fees = models.DecimalField(max_digits=12, decimal_places=2)
    debited_amount = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal("0"))
    recipient_amount = models.DecimalField(max_digits=14, decimal_places=2)
    recipient_currency = models.CharField(max_length=3, default="USD")
    quote_id = models.UUIDField(null=True, blank=True)
    reference = models.CharField(max_length=200, blank=True)
    payment_method = models.CharField(max_length=16)
    uetr = models.UUIDField(null=True, blank=True)
    payment_instructions = models.JSONField(null=True, blank=True)
    deposit_instructions = models.JSONField(null=True, blank=True)
    deposit_expires_at = models.DateTimeField(null=True, blank=True)
    deposit_received_amount = models.DecimalField(
        max_digits=14, decimal_places=2, null=True, blank=True
    )
    supporting_documents = models.JSONField(default=list, blank=True)
    client_markup = models.JSONField(null=True, blank=True)
    extra_info = models.JSONField(null=True, blank=True)
    failure_reason = models.CharField(max_length=64, blank=True)
    events = models.JSONField(default=list)
    next_step_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["client", "environment", "-created_at"]),
            models.Index(fields=["next_step_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.payout_id} {self.status} {self.amount} {self.currency}"


class WebhookRegistration(ClientRecord):
    """Where a client's events go, and the secrets that sign them (current and previous)."""

    webhook_url = models.URLField(max_length=500)
    secret = models.CharField(max_length=500)
    previous_secret = models.CharField(max_length=500, blank=True)
    rotated_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["client", "environment"], name="emulator_one_webhook_per_client_env"
            )
        ]

    def __str__(self) -> str:
        return f"{self.webhook_url} ({self.environment})"


class WebhookEvent(ClientRecord):
    """An event as emitted: its envelope is rebuilt from these fields for every attempt."""

    event_id = models.CharField(max_length=64, unique=True)
    event = models.CharField(max_length=64)
    data = models.JSONField()
    # The envelope exactly as sent and signed: jsonb does not keep key order, this text does.
    body = models.TextField(default="")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.event} {self.event_id}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "pending"
    SENDING = "sending", "sending"
    DELIVERED = "delivered", "delivered"
    FAILED = "failed", "failed"
    DROPPED = "dropped", "dropped"


class SecretSlot(models.TextChoices):
    CURRENT = "current", "current"
    PREVIOUS = "previous", "previous"


class WebhookDelivery(models.Model):
    """The queued delivery of one event to the client's registration, with its retry schedule."""

    event = models.OneToOneField(WebhookEvent, on_delete=models.CASCADE, related_name="delivery")
    registration = models.ForeignKey(
        WebhookRegistration, on_delete=models.CASCADE, related_name="deliveries"
    )
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    # The secret in force when the delivery was queued; after a rotation it keeps signing until
    # `secret_until` (rotation time + overlap), then the registration's current secret takes over.
    signing_secret = models.CharField(max_length=500, blank=True)
    secret_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    queued_at = models.DateTimeField()
    next_attempt_at = models.DateTimeField()
    # A claimed ("sending") delivery whose lease ran out was left by a crashed process: reclaimable.
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["next_attempt_at", "id"]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"delivery of {self.event_id} ({self.status})"


class DeliveryAttempt(models.Model):
    """One attempt to deliver an event: the log behind /_control/webhooks/deliveries."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="log")
    event_id = models.CharField(max_length=64)
    event = models.CharField(max_length=64)
    url = models.URLField(max_length=500)
    attempt = models.PositiveSmallIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=16)
    error = models.CharField(max_length=200, blank=True)
    secret_slot = models.CharField(max_length=8, choices=SecretSlot.choices)
    # sha256 of the secret, first 12 hex digits: tells secrets apart without showing them.
    secret_fingerprint = models.CharField(max_length=12)
    at = models.DateTimeField()

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.event_id} attempt {self.attempt}: {self.outcome}"
