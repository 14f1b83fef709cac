"""The payout's timeline: every move with its source, and upstream reports that did not move it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone
from django.utils.translation import gettext

from payouts.models import Payout
from payouts.release.waiting import wait_text
from payouts.tracking.events import event_note_text


@dataclass(frozen=True)
class TimelineRow:
    """One entry of includes/timeline.html: a move (applied) or an upstream report that did not
    move the payout (not applied, with the reason in its note)."""

    at: datetime | None
    status: str
    kind: str  # ChangeSource: "event" entries show in the upstream's tone
    source: str
    by: str
    note: str
    applied: bool
    event_id: str = ""

    def get_kind_display(self) -> str:
        return self.source

    @property
    def summary(self) -> str:
        """In the active language; the note (a person's reason, an upstream's) as written."""
        text = (
            str(self.status)
            if self.applied
            else gettext("%(status)s reported, not applied") % {"status": self.status}
        )
        if self.by:
            text = gettext("%(text)s by %(person)s") % {"text": text, "person": self.by}
        return f"{text}: {self.note}" if self.note else text


def timeline(payout: Payout) -> list[TimelineRow]:
    """Every move with its source, plus the upstream reports that did not move it (why)."""
    rows = [
        TimelineRow(
            at=change.at,
            status=change.get_to_status_display(),
            kind=change.source,
            source=change.get_source_display(),
            by=change.by.email if change.by else "",
            note=change.reason,
            applied=True,
            event_id=change.event_id,
        )
        for change in payout.status_changes.select_related("by")
    ]
    rows += [
        TimelineRow(
            at=event.occurred_at or event.received_at,
            status=event.get_status_display(),
            kind=event.source,
            source=event.get_source_display(),
            by="",
            note=event_note_text(event.note),
            applied=False,
            event_id=event.event_id,
        )
        for event in payout.events.filter(applied=False)
    ]
    waiting = wait_text(payout)
    if waiting:  # the initiation waits to be sent again: the latest line, live
        rows.append(
            TimelineRow(
                at=payout.upstream_wait_since,
                status=payout.get_status_display(),
                kind="system",
                source=gettext("System"),
                by="",
                note=waiting,
                applied=True,
            )
        )
    return sorted(rows, key=lambda row: row.at or timezone.now())
