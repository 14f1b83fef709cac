"""Writing the upstream call log: never allowed to break the call it records."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from gateway.models import UpstreamCall
from staff.redaction import redact

logger = logging.getLogger(__name__)


IN_FLIGHT = "in_flight"  # the error code of a row whose answer has not come (yet)


@dataclass
class CallRecord:
    environment_id: int | None
    operation: str
    method: str
    path: str
    attempt: int
    idempotency_key: str
    priority: str
    request_body: Any


def open_row(record: CallRecord) -> int | None:
    """
    Write the attempt's row before the request is sent, in autocommit (the gateway refuses to run
    inside a transaction): a process killed mid-call still leaves the row, `in_flight`.
    """
    try:
        row = UpstreamCall.objects.create(
            environment_id=record.environment_id,
            operation=record.operation[:60],
            method=record.method,
            path=record.path[:500],
            attempt=record.attempt,
            idempotency_key=record.idempotency_key[:100],
            error_code=IN_FLIGHT,
            priority=record.priority,
            request_body=redact(record.request_body, limit=settings.GATEWAY_CALL_LOG_BODY_LIMIT),
        )
    except Exception:
        logger.exception(
            "could not write the upstream call log (%s %s)", record.method, record.path
        )
        return None
    return int(row.pk)


def drop_row(row_id: int | None) -> None:
    """Remove the row of an attempt that was never sent (our limiter refused it)."""
    if row_id is not None:
        UpstreamCall.objects.filter(pk=row_id).delete()


def close_row(
    row_id: int | None, *, status: int | None, duration_ms: int, error_code: str, response_body: Any
) -> None:
    """Complete the attempt's row with what came back (or did not)."""
    if row_id is None:
        return
    try:
        UpstreamCall.objects.filter(pk=row_id).update(
            status=status,
            duration_ms=max(0, duration_ms),
            error_code=error_code[:100],
            response_body=redact(response_body, limit=settings.GATEWAY_CALL_LOG_BODY_LIMIT),
        )
    except Exception:
        logger.exception("could not complete the upstream call log row %s", row_id)


def prune(*, days: int | None = None) -> int:
    """Delete log rows older than the retention; returns how many went."""
    keep = settings.GATEWAY_CALL_LOG_RETENTION_DAYS if days is None else days
    cutoff = timezone.now() - timedelta(days=keep)
    deleted, _ = UpstreamCall.objects.filter(created_at__lt=cutoff).delete()
    return deleted
