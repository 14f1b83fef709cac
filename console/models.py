"""What the console itself stores: the worker's heartbeat (read by /readyz) and the live outbox."""

from __future__ import annotations

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils import timezone


class WorkerHeartbeat(models.Model):
    """When a task worker (qcluster) last ran the heartbeat task; /readyz reads it."""

    cluster = models.CharField(max_length=100, unique=True)
    beat_at = models.DateTimeField()

    class Meta:
        verbose_name = "worker heartbeat"

    def __str__(self) -> str:
        return f"{self.cluster} at {self.beat_at:%Y-%m-%d %H:%M:%S}"


class LiveMessage(models.Model):
    """
    One live-update message for one channel group, on its way to the open pages of every web
    process: the outbox of the embedded default's channel layer (console.live). Written in the
    sender's transaction, read by each web process that has listeners, pruned after minutes.
    """

    group = models.CharField(max_length=100)
    message = models.JSONField(encoder=DjangoJSONEncoder)
    # Which process wrote it: that process delivered it locally already and skips it when read.
    origin = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = "live message"

    def __str__(self) -> str:
        return f"#{self.pk} to {self.group}"
