"""Applying an upstream event to a mirrored record once per event id (`mirror_apply_event`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from gateway.models import Environment
from staff.actions import record_action
from users.mirror.records import EventDataError, MirrorKind, timeline_add
from users.models import TimelineKind, UpstreamMirror


@dataclass
class EventOutcome:
    """What applying an event did: whether it changed the record, the timeline's words, and
    what to do once the line is written (a refresh to queue)."""

    applied: bool
    summary: str
    then: Callable[[], None] | None = None


def mirror_apply_event[M: UpstreamMirror](
    kind: MirrorKind[M, Any],
    *,
    environment: Environment,
    upstream_id: str,
    event_type: str,
    data: dict[str, Any],
    new_row: Callable[[], M],
    apply: Callable[[M, bool], EventOutcome],
) -> M:
    """
    Apply one event to the record it names, in one transaction: the row locked (or `new_row`
    saved, when unknown; a concurrent first event may save it too), an `event_id` applied once
    per record, `apply(row, is_new)`, then one timeline line and, when it changed the record,
    one audit entry.
    """
    event_id = str(data.get("event_id") or "")
    with transaction.atomic():
        row, is_new = _event_row(kind.model, environment, upstream_id, new_row)
        if not is_new and event_id and row.timeline.filter(event_id=event_id).exists():
            return row  # delivered twice: applied the first time
        before = kind.snapshot(row)
        outcome = apply(row, is_new)
        row.save()
        timeline_add(
            row,
            kind=TimelineKind.EVENT,
            event_type=event_type,
            event_id=event_id,
            applied=outcome.applied,
            summary=outcome.summary,
            data=data,
        )
        if outcome.applied:
            record_action(
                actor=None,
                action=f"{kind.audit}.event.{event_type}",
                target=row,
                details={"before": before, "after": kind.snapshot(row), "event_id": event_id},
            )
        if outcome.then is not None:
            outcome.then()
    return row


def _event_row[M: UpstreamMirror](
    model: type[M], environment: Environment, upstream_id: str, new_row: Callable[[], M]
) -> tuple[M, bool]:
    """The locked row of `upstream_id`, or a new one; and whether this event created it."""
    row = (
        model._default_manager.select_for_update()
        .filter(environment=environment, upstream_id=upstream_id)
        .first()
    )
    if row is not None:
        return row, False
    row = new_row()
    try:
        with transaction.atomic():  # a concurrent first event may create it too
            row.save()
    except IntegrityError:
        return model._default_manager.select_for_update().get(
            environment=environment, upstream_id=upstream_id
        ), False
    return row, True


def event_record_id(data: Any, *, id_field: str, event_type: str) -> str:
    """The record id an event's data names; EventDataError when data or id is missing."""
    if not isinstance(data, dict):
        raise EventDataError("event data must be an object")
    upstream_id = str(data.get(id_field) or "").strip()
    if not upstream_id:
        raise EventDataError(f"{event_type} without {id_field}")
    return upstream_id
