"""The live outbox's reads and writes (console.LiveMessage): one short statement each."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import Max, Q
from django.utils import timezone

from console.live.cursor import GAP_WAIT, MAX_GAPS, Cursor, cursor_advance, cursor_start
from console.models import LiveMessage


@dataclass(frozen=True)
class OutboxRow:
    """One message as read back: its id, group, the channel-layer message, who wrote it."""

    id: int
    group: str
    message: dict[str, Any]
    origin: str


def outbox_write(*, groups: Iterable[str], message: dict[str, Any], origin: str) -> None:
    """One row per group, in one INSERT, inside the caller's transaction if there is one."""
    LiveMessage.objects.bulk_create(
        [LiveMessage(group=group, message=message, origin=origin) for group in groups]
    )


def outbox_start(*, now: float) -> Cursor:
    """A cursor after the newest row (no replay), awaiting recent ids not yet visible."""
    newest = LiveMessage.objects.aggregate(newest=Max("id"))["newest"] or 0
    settled = (
        LiveMessage.objects.filter(
            created_at__lte=timezone.now() - timedelta(seconds=GAP_WAIT)
        ).aggregate(settled=Max("id"))["settled"]
        or 0
    )
    recent = LiveMessage.objects.filter(id__gt=max(settled, newest - MAX_GAPS)).values_list(
        "id", flat=True
    )
    return cursor_start(newest_id=newest, settled_id=settled, recent_ids=list(recent), now=now)


def outbox_read(cursor: Cursor, *, limit: int, now: float) -> tuple[list[OutboxRow], Cursor]:
    """The rows after the cursor (and the awaited ones), oldest first, and the cursor after them."""
    where = Q(id__gt=cursor.last_id)
    if cursor.gaps:
        where |= Q(id__in=sorted(cursor.gaps))
    rows = [
        OutboxRow(id=pk, group=group, message=message, origin=origin)
        for pk, group, message, origin in LiveMessage.objects.filter(where)
        .order_by("id")
        .values_list("id", "group", "message", "origin")[:limit]
    ]
    return rows, cursor_advance(cursor, read_ids=[row.id for row in rows], now=now)


def outbox_prune(*, older_than: timedelta) -> int:
    """Delete the rows older than `older_than` (every open page has read them long ago)."""
    deleted, _ = LiveMessage.objects.filter(created_at__lt=timezone.now() - older_than).delete()
    return deleted
