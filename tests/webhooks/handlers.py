"""Apply services for tests: real functions in the shape of the directory's and payouts' ones."""

from __future__ import annotations

from typing import Any

from staff.audit import audit_record
from staff.models import AuditEntry

CALLS: list[tuple[str, str]] = []
FAIL_TIMES: dict[str, int] = {}


def record_apply_event(*, environment: Any, event_type: str, data: dict[str, Any]) -> AuditEntry:
    """Writes a row (an audit entry stands in for the touched object) and returns it."""
    key = data.get("event_id", "")
    if FAIL_TIMES.get(key, 0) > 0:
        FAIL_TIMES[key] -= 1
        raise RuntimeError("upstream object not found yet")
    CALLS.append((event_type, key))
    # Through audit_record: an entry made any other way would have no place in the hash chain.
    return audit_record(actor=None, action=f"test.{event_type}", details={"event_id": key})
