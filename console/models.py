"""What the console itself stores: the worker's heartbeat, which /readyz reads."""

from __future__ import annotations

from django.db import models


class WorkerHeartbeat(models.Model):
    """When a task worker (qcluster) last ran the heartbeat task; /readyz reads it."""

    cluster = models.CharField(max_length=100, unique=True)
    beat_at = models.DateTimeField()

    class Meta:
        verbose_name = "worker heartbeat"

    def __str__(self) -> str:
        return f"{self.cluster} at {self.beat_at:%Y-%m-%d %H:%M:%S}"
