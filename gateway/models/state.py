"""Gateway bookkeeping rows: the database limiter's state."""

from __future__ import annotations

from django.db import models


class LimiterRow(models.Model):
    """The shared limiter state of one environment when no Redis is configured (locked per call)."""

    environment = models.OneToOneField(
        "gateway.Environment", on_delete=models.CASCADE, related_name="+"
    )
    state = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"limiter of environment {self.environment_id}"
