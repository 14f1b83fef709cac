"""The upstream call log, newest first, filtered by environment, status class, path and day."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Q, QuerySet

from gateway.models import Environment, UpstreamCall

STATUS_CLASS_FILTERS = {
    "2xx": Q(status__gte=200, status__lt=300),
    "3xx": Q(status__gte=300, status__lt=400),
    "4xx": Q(status__gte=400, status__lt=500),
    "5xx": Q(status__gte=500, status__lt=600),
    "none": Q(status__isnull=True),
}


def call_log_list(
    *,
    environment: Environment | None = None,
    status_class: str = "",
    path: str = "",
    day: date | None = None,
) -> QuerySet[UpstreamCall]:
    """Calls newest first, filtered; one query per page (environment joined)."""
    calls = UpstreamCall.objects.select_related("environment").order_by("-created_at", "-id")
    if environment is not None:
        calls = calls.filter(environment=environment)
    if status_class:
        calls = calls.filter(STATUS_CLASS_FILTERS[status_class])
    if path:
        calls = calls.filter(path__icontains=path)
    if day is not None:
        start = datetime.combine(day, time.min, tzinfo=UTC)
        calls = calls.filter(created_at__gte=start, created_at__lt=start + timedelta(days=1))
    return calls
