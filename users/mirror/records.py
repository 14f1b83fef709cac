"""What every mirror shares: permissions, snapshots, upstream times, timeline lines, refreshing a
record, event-data errors, and `MirrorKind` (how one kind of record is mirrored)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils.translation import gettext
from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticError

from gateway.schemas import Timestamp
from staff.actions import record_action
from staff.errors import ServiceError
from staff.models import StaffUser
from users.live import mirror_changed
from users.models import TimelineEntryBase, TimelineKind, UpstreamMirror

_TIMESTAMP = TypeAdapter(Timestamp)


class EventDataError(ServiceError):
    """An event whose data cannot be applied (missing id, unknown status, bad time)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="event_data_invalid")


def require(user: StaffUser | None, permission: str) -> None:
    """Services check permissions themselves: views and the API are not the only callers."""
    if user is not None and not user.has_perm(permission):
        raise PermissionDenied(
            gettext("You do not have the permission %(permission)s.") % {"permission": permission}
        )


def snapshot_of(record: UpstreamMirror, fields: Mapping[str, str]) -> dict[str, Any]:
    """What the audit trail keeps as 'before' and 'after': each key read from the attribute it
    names (lists copied, so a later change of the record does not change the snapshot)."""
    values = {key: getattr(record, attribute) for key, attribute in fields.items()}
    return {key: list(v) if isinstance(v, list) else v for key, v in values.items()}


def parse_time(value: Any, *, field: str) -> datetime | None:
    """An upstream timestamp (None when absent), or EventDataError naming the field."""
    if value in (None, ""):
        return None
    try:
        return _TIMESTAMP.validate_python(value)
    except PydanticError:
        raise EventDataError(f"{field} is not a timestamp: {value!r}") from None


def timeline_add(
    record: UpstreamMirror,
    *,
    summary: str,
    kind: str = TimelineKind.STAFF,
    actor: StaffUser | None = None,
    event_type: str = "",
    event_id: str = "",
    applied: bool = True,
    data: dict[str, Any] | None = None,
) -> TimelineEntryBase:
    """One line on a mirrored record's timeline (end user, virtual account or recipient); open
    pages of the record hear of it once the transaction commits."""
    entry: TimelineEntryBase = record.timeline.create(
        kind=kind,
        actor=actor,
        summary=summary[:300],
        event_type=event_type,
        event_id=event_id,
        applied=applied,
        data=data or {},
    )
    mirror_changed(record)
    return entry


def refresh_after_commit(task: Callable[[int], None], record: UpstreamMirror) -> None:
    """Queue `task(record.pk)` (a background refresh) once the transaction commits."""
    from django_q.tasks import async_task

    pk = record.pk
    transaction.on_commit(lambda: async_task(task, pk))


def record_refresh[M: UpstreamMirror](
    kind: MirrorKind[M, Any],
    target: M,
    *,
    before: dict[str, Any],
    by: StaffUser | None,
    timeline_keeps_before: bool = False,
) -> None:
    """
    After a record was re-read from the upstream and saved (inside its transaction): when its
    snapshot moved from `before`, one timeline line naming the fields (a system line when `by`
    is None: a background task) and one audit entry `<audit>.refreshed` with before and after.
    `timeline_keeps_before` also keeps the changed fields' old values in the timeline line.
    """
    after = kind.snapshot(target)
    if before == after:
        return
    changed = sorted(k for k in after if before.get(k) != after.get(k))
    timeline_add(
        target,
        kind=TimelineKind.SYSTEM if by is None else TimelineKind.STAFF,
        actor=by,
        summary="Refreshed from the upstream: " + ", ".join(changed),
        data={"before": {k: before[k] for k in changed}} if timeline_keeps_before else None,
    )
    record_action(
        actor=by,
        action=f"{kind.audit}.refreshed",
        target=target,
        details={"before": before, "after": after},
    )


@dataclass(frozen=True)
class MirrorKind[M: UpstreamMirror, R]:
    """
    What the shared steps need to know of one kind of mirrored record: its model, the audit name
    (`<audit>.created`, `<audit>.event.<type>`), its audit snapshot, and how an upstream answer
    (`R`) is taken in. `fold_early`, when the kind has webhooks, takes what a row created early
    by an event knew (before that row is deleted) and returns what to do after the answer is
    applied (or None).
    """

    model: type[M]
    audit: str
    snapshot_fields: Mapping[str, str]  # the audit snapshot: key -> attribute (see snapshot_of)
    upstream_id_of: Callable[[R], str]
    apply_answer: Callable[[M, R], None]
    fold_early: Callable[[M, M], Callable[[M], None] | None] | None = None
    # Kinds whose create takes no idempotency key: the upstream's records of the row's end user,
    # and whether one of them is the row's (for the adoption after no answer).
    listed: Callable[[M], list[R]] | None = None
    matches: Callable[[M, R], bool] | None = None

    def snapshot(self, row: M) -> dict[str, Any]:
        """What the audit trail keeps of `row` as 'before' and 'after'."""
        return snapshot_of(row, self.snapshot_fields)
