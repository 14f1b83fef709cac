"""Prune raw deliveries after WEBHOOKS_DELIVERY_RETENTION_DAYS; events are kept for good."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from webhooks.models import WebhookDelivery


def webhook_deliveries_prune(*, now: datetime | None = None, days: int | None = None) -> int:
    """Delete deliveries older than the retention; returns how many went. Events stay."""
    now = now or timezone.now()
    keep = settings.WEBHOOKS_DELIVERY_RETENTION_DAYS if days is None else days
    deleted, _ = WebhookDelivery.objects.filter(received_at__lt=now - timedelta(days=keep)).delete()
    return deleted
