"""Webhook reads: the event log, refused deliveries, an event's page, endpoints, missed events."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Prefetch, Q, QuerySet

from gateway.models import Environment
from webhooks.models import (
    MissedEvent,
    ProcessingAttempt,
    SignatureVerdict,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventLink,
)

EVENT_STATUSES = {"processed", "failed", "unhandled", "no_handler", "pending"}


def event_list(
    *,
    q: str = "",
    event_type: str = "",
    status: str = "",
    object_kind: str = "",
    environment: Environment | None = None,
    received_from: datetime | None = None,
    received_to: datetime | None = None,
) -> QuerySet[WebhookEvent]:
    """Events newest first, filtered; environment joined so a page is one query."""
    events = WebhookEvent.objects.select_related("environment").order_by("-received_at", "-id")
    if q:
        q = q.strip()
        events = events.filter(
            Q(event_id=q)
            | Q(object_ids__contains=q)
            | Q(pk__in=WebhookEventLink.objects.filter(upstream_id=q).values("event_id"))
        )
    if event_type:
        events = events.filter(event_type=event_type)
    if status in EVENT_STATUSES:
        events = events.filter(status=status)
    elif status == "drift":
        events = events.filter(has_drift=True)
    if object_kind:
        events = events.filter(
            pk__in=WebhookEventLink.objects.filter(kind=object_kind).values("event_id")
        )
    if environment is not None:
        events = events.filter(environment=environment)
    if received_from is not None:
        events = events.filter(received_at__gte=received_from)
    if received_to is not None:
        events = events.filter(received_at__lte=received_to)
    return events


def event_matches(event: WebhookEvent, filters: dict[str, Any]) -> bool:
    """Whether one event belongs on a filtered log (for rows pushed live)."""
    return event_list(**filters).filter(pk=event.pk).exists()


def refused_deliveries(
    *, environment: Environment | None = None, q: str = ""
) -> QuerySet[WebhookDelivery]:
    deliveries = (
        WebhookDelivery.objects.exclude(verdict=SignatureVerdict.VALID)
        .select_related("endpoint__environment")
        .defer("body")
        .order_by("-received_at", "-id")
    )
    if environment is not None:
        deliveries = deliveries.filter(endpoint__environment=environment)
    if q:
        deliveries = deliveries.filter(reason__icontains=q)
    return deliveries


def event_detail(*, pk: int) -> WebhookEvent:
    return (
        WebhookEvent.objects.select_related("environment")
        .prefetch_related(
            Prefetch(
                "deliveries",
                queryset=WebhookDelivery.objects.order_by("received_at", "id"),
            ),
            Prefetch("attempt_log", queryset=ProcessingAttempt.objects.order_by("number")),
            Prefetch("links", queryset=WebhookEventLink.objects.select_related("content_type")),
        )
        .get(pk=pk)
    )


def endpoint_rows() -> list[dict[str, Any]]:
    """Every environment with its endpoint (or None), for the endpoints page."""
    endpoints = {e.environment_id: e for e in WebhookEndpoint.objects.all()}
    return [
        {"environment": environment, "endpoint": endpoints.get(environment.pk)}
        for environment in Environment.objects.order_by("name")
    ]


def missed_list() -> QuerySet[MissedEvent]:
    return MissedEvent.objects.select_related("environment", "matched_event")


def lag_metrics() -> list[Any]:
    """Scrape-time gauges (console.metrics): events waiting to be processed, the age of the oldest
    of them and the seconds since the last event was received, in one aggregate query."""
    from django.db.models import Count, Max, Min
    from django.utils import timezone
    from prometheus_client.core import GaugeMetricFamily

    from webhooks.models import EventStatus

    waiting = Q(status__in=[EventStatus.PENDING, EventStatus.NO_HANDLER]) | Q(
        status=EventStatus.FAILED, next_attempt_at__isnull=False
    )
    row = WebhookEvent.objects.aggregate(
        pending=Count("id", filter=waiting),
        oldest_pending=Min("received_at", filter=Q(status=EventStatus.PENDING)),
        last=Max("received_at"),
    )
    now = timezone.now()
    pending = GaugeMetricFamily(
        "payops_webhook_oldest_pending_seconds",
        "Age of the oldest stored event not processed yet (0 when none is pending).",
    )
    pending.add_metric(
        [], (now - row["oldest_pending"]).total_seconds() if row["oldest_pending"] else 0
    )
    queued = GaugeMetricFamily(
        "payops_webhook_events_pending",
        "Stored webhook events still to process (pending, failed with a retry due, no handler).",
    )
    queued.add_metric([], row["pending"] or 0)
    families = [queued, pending]
    if row["last"] is not None:  # no event ever: no sample rather than a made-up age
        since = GaugeMetricFamily(
            "payops_webhook_last_received_seconds",
            "Seconds since the last webhook event was received.",
        )
        since.add_metric([], (now - row["last"]).total_seconds())
        families.append(since)
    return families
