"""Background work of the console, run by the django-q2 worker (qcluster): the heartbeat, and
pruning the live outbox."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from console.models import WorkerHeartbeat

logger = logging.getLogger(__name__)


def heartbeat() -> str:
    """Record that a worker of this cluster is alive and running scheduled tasks."""
    beat_at: datetime = timezone.now()
    cluster = str(settings.Q_CLUSTER.get("name", "payops"))
    WorkerHeartbeat.objects.update_or_create(cluster=cluster, defaults={"beat_at": beat_at})
    return beat_at.isoformat()


def heartbeat_on_worker_start(sender: object, proc_name: str = "", **kwargs: Any) -> None:
    """
    django-q2's post_spawn receiver: a worker process that is ready for work beats at once, so
    /readyz is green as soon as the worker is up instead of after the first scheduled beat.
    """
    try:
        heartbeat()
    except Exception:  # a worker that cannot write its heartbeat still runs tasks; /readyz tells
        logger.exception("worker %s could not record its start-up heartbeat", proc_name)


def live_messages_prune() -> int:
    """Delete the live outbox's messages that every open page has read long ago."""
    from console.live.outbox import outbox_prune

    return outbox_prune(older_than=timedelta(seconds=settings.PAYOPS_LIVE_KEEP_SECONDS))
