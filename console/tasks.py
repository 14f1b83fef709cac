"""Background tasks of the staff app, run by the django-q2 worker (qcluster)."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.utils import timezone

from console.models import WorkerHeartbeat


def heartbeat() -> str:
    """Record that a worker of this cluster is alive and running scheduled tasks."""
    beat_at: datetime = timezone.now()
    cluster = str(settings.Q_CLUSTER.get("name", "payops"))
    WorkerHeartbeat.objects.update_or_create(cluster=cluster, defaults={"beat_at": beat_at})
    return beat_at.isoformat()
