"""Writing the upstream call log: never allowed to break the call it records."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone

from gateway.models import UpstreamCall
from staff.redaction import redact

logger = logging.getLogger(__name__)


@dataclass
class CallRecord:
    environment_id: int | None
    operation: str
    method: str
    path: str
    status: int | None
    duration_ms: int
    attempt: int
    idempotency_key: str
    error_code: str
    priority: str
    request_body: Any
    response_body: Any


def write(record: CallRecord) -> None:
    limit = settings.GATEWAY_CALL_LOG_BODY_LIMIT
    try:
        UpstreamCall.objects.create(
            environment_id=record.environment_id,
            operation=record.operation[:60],
            method=record.method,
            path=record.path[:500],
            status=record.status,
            duration_ms=max(0, record.duration_ms),
            attempt=record.attempt,
            idempotency_key=record.idempotency_key[:100],
            error_code=record.error_code[:100],
            priority=record.priority,
            request_body=redact(record.request_body, limit=limit),
            response_body=redact(record.response_body, limit=limit),
        )
    except Exception:
        logger.exception(
            "could not write the upstream call log (%s %s)", record.method, record.path
        )


async def awrite(record: CallRecord) -> None:
    try:
        await sync_to_async(write)(record)
    except Exception:
        logger.exception("could not write the upstream call log")


def prune(*, days: int | None = None) -> int:
    """Delete log rows older than the retention; returns how many went."""
    keep = settings.GATEWAY_CALL_LOG_RETENTION_DAYS if days is None else days
    cutoff = timezone.now() - timedelta(days=keep)
    deleted, _ = UpstreamCall.objects.filter(created_at__lt=cutoff).delete()
    return deleted
