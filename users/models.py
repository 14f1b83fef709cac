"""End users mirrored from the upstream per environment, their KYC state, timeline and reviews."""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy

from gateway.idempotency import IdempotentModel


class EndUserType(models.TextChoices):
    INDIVIDUAL = "individual", gettext_lazy("Individual")
    BUSINESS = "business", gettext_lazy("Business")


class EndUserStatus(models.TextChoices):
    UNVERIFIED = "unverified", gettext_lazy("Unverified")
    VERIFIED = "verified", gettext_lazy("Verified")


class VerificationStatus(models.TextChoices):
    NOT_STARTED = "not_started", gettext_lazy("Waiting for a decision")
    VERIFIED = "verified", gettext_lazy("Verified")
    REJECTED = "rejected", gettext_lazy("Rejected")


def staff_link() -> models.ForeignKey[Any, Any]:
    """A link to the staff member who did something to a record (none for the system)."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )


class UpstreamMirror(models.Model):
    """What every mirrored upstream record carries: where, its upstream id, its last body."""

    environment = models.ForeignKey(
        "gateway.Environment", on_delete=models.PROTECT, related_name="+"
    )
    # Blank until the upstream confirmed the creation (the row is committed first, so a retry
    # finds it again by its `request_key`, and sends the same idempotency key where it has one).
    upstream_id = models.CharField(max_length=64, blank=True, db_index=True)
    upstream_payload = models.JSONField(default=dict, blank=True)
    refreshed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The submission (`request_key`: our API's Idempotency-Key or a form's hidden id) is bound
    # to one request: the SHA-256 of its canonical body (users.mirror.fingerprint_of; blank on
    # rows made before it was kept, and on rows an event made), and, while its create is with
    # the upstream, when the claim of the request in flight lapses (a killed process's claim
    # frees itself then; users.mirror.mirror_create).
    request_fingerprint = models.CharField(max_length=64, blank=True, editable=False)
    claimed_until = models.DateTimeField(null=True, blank=True, editable=False)
    # Each concrete mirror has its own timeline model whose FK says related_name="timeline".
    timeline: Any
    # What live updates call this kind of record: "<kind>.changed", with "<kind>_id" (users.live).
    live_kind: ClassVar[str] = ""

    class Meta:
        abstract = True

    @property
    def is_synced(self) -> bool:
        return bool(self.upstream_id)


def mirror_constraints(prefix: str) -> list[models.BaseConstraint]:
    """
    An UpstreamMirror's unique constraints, named `<prefix>_…` as the existing migrations named
    them (Meta's `%(class)s` would spell "enduser"): one row per upstream id in an environment
    once it has one, and one per submission: a `request_key` is its creator's, in one
    environment (another person's key, or the same key in another environment, is another
    submission and never finds this row).
    """
    return [
        models.UniqueConstraint(
            fields=["environment", "upstream_id"],
            condition=~models.Q(upstream_id=""),
            name=f"{prefix}_upstream_id_per_environment",
        ),
        models.UniqueConstraint(
            fields=["environment", "created_by", "request_key"],
            name=f"{prefix}_request_key_per_creator",
        ),
    ]


class EndUser(IdempotentModel, UpstreamMirror):
    """
    An upstream user (KYC'd person or KYB'd business) as PayOps last knew it. Fields are the
    upstream's own names (interface.md 2.4, decisions.md 2 "Users"); `reasons` are the codes of
    the last `user.verification.failed`.
    """

    live_kind = "end_user"
    # `idempotency_key` (gateway.idempotency.IdempotentModel) is sent with POST /v1/users;
    # `request_key` is the form's (or API caller's) submission id, so a double submit finds
    # this row again instead of creating a second one.
    request_key = models.UUIDField(default=uuid.uuid4, editable=False)
    type = models.CharField(
        max_length=20, choices=EndUserType.choices, default=EndUserType.INDIVIDUAL
    )
    # Blank only on a mirror made from an event that lacks them, until its refresh fills them.
    email = models.EmailField(blank=True)
    phone_number = models.CharField(max_length=32, blank=True)
    first_name = models.CharField(max_length=200, blank=True)
    last_name = models.CharField(max_length=200, blank=True)
    country = models.CharField(max_length=2, blank=True)
    status = models.CharField(
        max_length=20, choices=EndUserStatus.choices, default=EndUserStatus.UNVERIFIED
    )
    verification_status = models.CharField(
        max_length=20, choices=VerificationStatus.choices, default=VerificationStatus.NOT_STARTED
    )
    verification_mode = models.CharField(max_length=30, blank=True)
    kyc_type = models.CharField(max_length=30, blank=True)
    verification_id = models.CharField(max_length=64, blank=True)
    reasons = models.JSONField(default=list, blank=True)
    requires_reverification = models.BooleanField(default=False)
    # The upstream's own times, used to order events (an older one never overwrites newer state).
    upstream_created_at = models.DateTimeField(null=True, blank=True)
    upstream_updated_at = models.DateTimeField(null=True, blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)
    created_by = staff_link()
    # Last compliance review, kept on the row so the review queue costs one query.
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = staff_link()

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = mirror_constraints("end_user")
        indexes = [
            models.Index(fields=["environment", "verification_status"]),
            models.Index(fields=["environment", "status"]),
        ]
        permissions = [
            ("view_directory", "Can see end users, virtual accounts and recipients"),
            ("review_kyc", "Can review KYC results and keep compliance notes"),
        ]

    def __str__(self) -> str:
        return f"{self.display_name} <{self.email}>"

    @property
    def display_name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip() or self.email

    @property
    def is_verified(self) -> bool:
        return self.verification_status == VerificationStatus.VERIFIED


class TimelineKind(models.TextChoices):
    EVENT = "event", gettext_lazy("Upstream event")
    STAFF = "staff", gettext_lazy("Staff action")
    SYSTEM = "system", gettext_lazy("System")


class TimelineEntryBase(models.Model):
    """One line of a record's timeline: an upstream event applied, or a staff action."""

    at = models.DateTimeField(default=timezone.now, db_index=True)
    kind = models.CharField(max_length=10, choices=TimelineKind.choices)
    event_type = models.CharField(max_length=60, blank=True)
    # The upstream's event_id: an event is recorded (and applied) once per record.
    event_id = models.CharField(max_length=80, blank=True)
    actor = staff_link()
    summary = models.CharField(max_length=300)
    # Whether the event changed the record (False: older than what we had, kept for the record).
    applied = models.BooleanField(default=True)
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        abstract = True
        ordering = ("-at", "-id")

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.summary}"


def event_once(owner: str, *, name: str) -> models.UniqueConstraint:
    """A timeline constraint: an upstream event is recorded once per record (staff lines: no id)."""
    return models.UniqueConstraint(
        fields=[owner, "event_id"], condition=~models.Q(event_id=""), name=name
    )


class EndUserTimelineEntry(TimelineEntryBase):
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="timeline")

    class Meta(TimelineEntryBase.Meta):
        verbose_name_plural = "end user timeline entries"
        constraints = [event_once("end_user", name="end_user_event_once")]


class KycReviewKind(models.TextChoices):
    NOTE = "note", gettext_lazy("Note")
    REVIEWED = "reviewed", gettext_lazy("Marked reviewed")


class KycReview(models.Model):
    """A compliance note or a 'reviewed' mark on an end user's KYC result: who, when, why."""

    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="reviews")
    kind = models.CharField(max_length=10, choices=KycReviewKind.choices)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    text = models.TextField()
    # The verification state the reviewer looked at, so a later change is visible.
    verification_status = models.CharField(max_length=20, choices=VerificationStatus.choices)

    class Meta:
        ordering = ("-at", "-id")

    def __str__(self) -> str:
        return f"{self.get_kind_display()} by {self.by} at {self.at:%Y-%m-%d %H:%M}"
