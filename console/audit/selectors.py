"""Reading the audit trail: one filtered, sorted query shared by the page, the export and the API.

Every filter is optional; the page and the export run the same `audit_entries`, so a CSV holds
exactly the rows the page showed. Two indexes serve the common filters (staff.AuditEntry.Meta:
a person's trail, an object's trail) besides `at` and `action`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from staff.models import AuditEntry, StaffUser

SYSTEM = "system"  # the person filter's value for entries no person made
SORTS = {"newest": ("-at", "-seq"), "oldest": ("at", "seq")}


@dataclass(frozen=True)
class AuditFilters:
    person: str = ""  # a staff user's id, SYSTEM, or "" for anyone
    target_type: str = ""  # app_label.model, e.g. payouts.payout
    target_id: str = ""
    action: str = ""  # a prefix: "payout." finds every payout action
    since: datetime | None = None
    until: datetime | None = None  # exclusive
    text: str = ""
    sort: str = "newest"


def day_start(day: date | None) -> datetime | None:
    if day is None:
        return None
    return datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())


def day_after(day: date | None) -> datetime | None:
    start = day_start(day)
    return None if start is None else start + timedelta(days=1)


def audit_entries(filters: AuditFilters) -> QuerySet[AuditEntry]:
    """The entries matching every given filter, sorted, with their actor (one query)."""
    rows = AuditEntry.objects.select_related("actor")
    if filters.person == SYSTEM:
        rows = rows.filter(actor__isnull=True)
    elif filters.person:
        rows = rows.filter(actor_id=int(filters.person))
    if filters.target_type:
        rows = rows.filter(target_type=filters.target_type.strip().lower())
    if filters.target_id:
        rows = rows.filter(target_id=filters.target_id.strip())
    if filters.action:
        rows = rows.filter(action__startswith=filters.action.strip())
    if filters.since is not None:
        rows = rows.filter(at__gte=filters.since)
    if filters.until is not None:
        rows = rows.filter(at__lt=filters.until)
    for word in filters.text.split():
        rows = rows.filter(
            Q(action__icontains=word)
            | Q(target_type__icontains=word)
            | Q(target_id__icontains=word)
            | Q(details__icontains=word)
            | Q(before__icontains=word)
            | Q(after__icontains=word)
        )
    return rows.order_by(*SORTS.get(filters.sort, SORTS["newest"]))


def audit_entry(entry_id: int) -> AuditEntry | None:
    return AuditEntry.objects.select_related("actor").filter(pk=entry_id).first()


def audit_people() -> list[tuple[str, str]]:
    """The person filter's menu: every staff login (one query), by email."""
    return [(str(pk), email) for pk, email in StaffUser.objects.values_list("pk", "email")]


EXPORT_HEADER = (
    "seq",
    "at",
    "person",
    "action",
    "object_type",
    "object_id",
    "details",
    "before",
    "after",
    "entry_hash",
)


def _json(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def audit_export_rows(filters: AuditFilters) -> Iterator[list[Any]]:
    """The export's rows, fetched in chunks (a server-side cursor on PostgreSQL): memory flat."""
    for entry in audit_entries(filters).iterator(chunk_size=1000):
        yield [
            entry.seq,
            entry.at.isoformat(),
            entry.actor.email if entry.actor else SYSTEM,
            entry.action,
            entry.target_type,
            entry.target_id,
            _json(entry.details),
            _json(entry.before),
            _json(entry.after),
            entry.entry_hash,
        ]
