"""Alerts' background work (django-q2): thin calls into the services."""

from __future__ import annotations

from alerts.delivery import deliveries_retry_due, delivery_send, digest_send
from alerts.services import alerts_evaluate


def alerts_evaluate_all() -> dict[str, int]:
    """Scheduled every minute: evaluate every enabled rule."""
    return alerts_evaluate()


def alert_delivery_send(delivery_id: int) -> str:
    """Send one delivery (queued on commit by the alert's fire or resolve)."""
    return delivery_send(delivery_id=delivery_id)


def alert_deliveries_retry() -> int:
    """Scheduled every minute: deliveries whose retry is due."""
    return deliveries_retry_due()


def alert_digest_daily() -> int:
    """Scheduled daily: each subscriber's digest of the day's alerts."""
    return digest_send()
