"""The upstream's payout status in every shape it comes in, normalised to one report (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gateway.schemas.common import PayoutStatus

# Our names for the upstream's states (payouts.states holds the table that moves between them).
# RETURNED is ours: the upstream reports a return as FAILED after COMPLETED (decisions.md 3).
LOCAL: dict[PayoutStatus, str] = {
    PayoutStatus.CREATED: "created",
    PayoutStatus.PENDING: "pending",
    PayoutStatus.PROCESSING: "processing",
    PayoutStatus.IN_REVIEW: "in_review",
    PayoutStatus.KYT_PENDING: "kyt_pending",
    PayoutStatus.COMPLETED: "completed",
    PayoutStatus.FAILED: "failed",
    PayoutStatus.CANCELLED: "cancelled",
    PayoutStatus.RETURNED: "returned",
}

STATUS_CHANGED = "payout.status_changed"
RETURNED_EVENT = "payout.returned"


class UnreadableStatus(ValueError):
    """The payload carries no payout id or no status we know: never guess a money state."""


@dataclass(frozen=True)
class StatusReport:
    upstream_id: str
    status: str  # a LOCAL value
    previous: str | None = None  # a LOCAL value, when the upstream said where it came from
    at: datetime | None = None
    reason: str = ""
    # The upstream's own times, when the payload says (docs/books.md, "Dating the ledger"): when
    # it made the move to `status` (status_changed's time, the GET's history) and when it made
    # the payout (GET/list and `payout.*` events' `created_at`).
    moved_at: datetime | None = None
    created_at: datetime | None = None


def _status(value: Any) -> PayoutStatus:
    try:
        return PayoutStatus(str(value))
    except ValueError:
        raise UnreadableStatus(f"unknown payout status {value!r}") from None


def _moment(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        # Both forms the upstream emits: `...123Z` and PostgreSQL's `... 00:52:49.879228+00`.
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def upstream_status(payload: Mapping[str, Any], *, event_type: str = "") -> StatusReport:
    """
    One reading of every shape (decisions.md 2 and 4):
    - the 201 of initiation, `{"data": {"id", "status": "created"}}` or its `data` (lowercase);
    - GET /v1/payouts/{id} and list items, bare `{"payout_id", "status": "PENDING", "events"}`;
    - payout.* events, flat `{"payout_id", "status", "reason"?, "created_at"}`;
    - payout.status_changed, nested `{"event_type", "created_at", "data": {"payout_id",
      "status", "previous_status"}}`.
    A return (payout.returned, or FAILED straight after COMPLETED) reads as `returned`.
    """
    body: Mapping[str, Any] = payload
    inner = body.get("data")
    at = _moment(body.get("created_at") or body.get("updated_at"))
    moved_at: datetime | None = None
    created_at = _moment(body.get("created_at"))
    if isinstance(inner, Mapping) and ("status" in inner or "payout_id" in inner):
        # The 201 envelope or status_changed's nesting: the figures live one level down, and
        # the envelope's `created_at` is the event's (the move's) time, not the payout's.
        event_type = event_type or str(body.get("event_type") or "")
        body = inner
        at = _moment(body.get("updated_at")) or at
        moved_at, created_at = at, _moment(body.get("created_at"))
    upstream_id = str(body.get("payout_id") or body.get("id") or "")
    if not upstream_id:
        raise UnreadableStatus("no payout id in the payload")
    if "status" not in body:
        raise UnreadableStatus("no status in the payload")
    status = _status(body["status"])
    previous_raw = body.get("previous_status")
    previous = _status(previous_raw) if previous_raw else None

    returned = event_type == RETURNED_EVENT or (
        status is PayoutStatus.FAILED and previous is PayoutStatus.COMPLETED
    )
    history = body.get("events")
    if status is PayoutStatus.FAILED and isinstance(history, list) and len(history) >= 2:
        # GET's own history: FAILED right after COMPLETED is a return (the money came back).
        steps = [str(item.get("status", "")).upper() for item in history if isinstance(item, dict)]
        returned = returned or steps[-2:] == ["COMPLETED", "FAILED"]
    if str(body.get("failure_reason") or body.get("reason") or "") == "returned":
        returned = returned or status is PayoutStatus.FAILED
    local = LOCAL[PayoutStatus.RETURNED] if returned else LOCAL[status]
    if isinstance(history, list):  # GET and list items: the move's time from their history
        moved_at = _moved_at(history, status) or _moment(body.get("updated_at"))
    return StatusReport(
        upstream_id=upstream_id,
        status=local,
        previous=LOCAL[previous] if previous else None,
        at=at,
        reason=str(body.get("reason") or body.get("failure_reason") or ""),
        moved_at=moved_at,
        created_at=created_at,
    )


def _moved_at(history: list[Any], status: PayoutStatus) -> datetime | None:
    """The time of the last step of the upstream's history into `status`."""
    for item in reversed(history):
        if isinstance(item, Mapping) and str(item.get("status", "")).upper() == status.value:
            return _moment(item.get("at"))
    return None
