"""Gateway bookkeeping rows: the database limiter's state and persisted idempotency keys."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone


class LimiterRow(models.Model):
    """The shared limiter state of one environment when no Redis is configured (locked per call)."""

    environment = models.OneToOneField(
        "gateway.Environment", on_delete=models.CASCADE, related_name="+"
    )
    state = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"limiter of environment {self.environment_id}"


class IdempotencyKey(models.Model):
    """
    The key sent with one upstream mutation of one business object, stored before the first
    attempt so that a retry, even after a crash, sends the same key.
    """

    scope = models.CharField(max_length=60)
    object_type = models.CharField(max_length=60)
    object_id = models.CharField(max_length=64)
    key = models.UUIDField(default=uuid.uuid4, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "object_type", "object_id"], name="idempotency_key_per_object"
            )
        ]

    def __str__(self) -> str:
        return f"{self.scope} {self.object_type}:{self.object_id}"
