"""Tracking to the final state: apply upstream events (idempotent, order-tolerant) and poll."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from console.sentences import Label, summary
from gateway.models import Environment
from payouts.approval import notifications
from payouts.models import (
    ChangeSource,
    NotificationKind,
    Payout,
    PayoutEvent,
    PayoutStatus,
)
from payouts.states import FINAL, can_move, payout_transition
from payouts.tracking.upstream_status import StatusReport, UnreadableStatus, upstream_status
from staff.audit import audit_record
from webhooks.services import missed_event_record

logger = logging.getLogger("payouts")
S = PayoutStatus


# An event that did not move its payout keeps why, in English (the record; the evidence pack);
# people read it through `event_note_text`.
ALREADY = "already in this state"
NOT_APPLIED = "not applied:"
_OUT_OF_ORDER = re.compile(
    r"^not applied: (?P<now>[a-z_]+) cannot become (?P<target>[a-z_]+) \(late or out of order\)$"
)


def event_note_text(note: str) -> str:
    """An event's note in the active language, its statuses as their labels; a note of
    another shape (none is written today) as written."""
    if note == ALREADY:
        return gettext("the payout was already in this state")
    match = _OUT_OF_ORDER.match(note)
    if match is None:
        return note
    labels = {}
    for key in ("now", "target"):
        value = match[key]
        labels[key] = str(S(value).label).lower() if value in S.values else value
    return (
        gettext(
            "the payout is %(now)s and cannot become %(target)s: the report came late or "
            "out of order"
        )
        % labels
    )


def payout_apply_event(
    *, environment: Environment, event_type: str, data: dict[str, Any]
) -> Payout | None:
    """
    Apply one upstream `payout.*` event (registered with webhooks in PayoutsConfig.ready()). Safe
    to call twice with the same event (its `event_id` is recorded once) and in any order (a status
    is applied only when the transition table allows it from the current one; a late, older one
    is kept as a record, not applied). None when the payload is unreadable or the payout is not
    known yet (then it is kept and applied once the initiation's answer names it).
    """
    try:
        report = upstream_status(data, event_type=event_type)
    except UnreadableStatus as exc:
        logger.warning("payout event %s not applied: %s", event_type, exc)
        return None
    event_id = str(data.get("event_id") or "")
    return payout_apply_report(
        environment=environment,
        report=report,
        source=ChangeSource.EVENT,
        event_id=event_id,
        event_type=event_type,
        data=data,
    )


def payout_apply_report(
    *,
    environment: Environment,
    report: StatusReport,
    source: str,
    event_id: str = "",
    event_type: str = "",
    data: dict[str, Any] | None = None,
) -> Payout | None:
    """Record `report` once (by event id) and move the payout if the table allows it."""
    if not event_id:
        # A poll (or an event without id): one record per upstream id and status seen.
        event_id = f"{source}:{report.upstream_id}:{report.status}"
    try:
        with transaction.atomic():
            payout = (
                Payout.objects.select_for_update(of=("self",))
                .select_related("maker")
                .filter(environment=environment, upstream_id=report.upstream_id)
                .first()
            )
            if PayoutEvent.objects.filter(environment=environment, event_id=event_id).exists():
                return payout  # seen before: nothing to do, twice is once
            record = PayoutEvent.objects.create(
                environment=environment,
                payout=payout,
                upstream_id=report.upstream_id,
                event_id=event_id,
                event_type=event_type or source,
                source=source,
                status=report.status,
                data=data or {},
                occurred_at=report.at,
            )
            if payout is None:
                record.note = "payout not recorded yet: applied when the initiation answer is"
                record.save(update_fields=["note"])
                return None
            _apply(payout, record, report)
    except IntegrityError:
        # The same event id arrived concurrently and the other delivery recorded it.
        return Payout.objects.filter(
            environment=environment, upstream_id=report.upstream_id
        ).first()
    return payout


def _apply(payout: Payout, record: PayoutEvent, report: StatusReport) -> None:
    """Inside the transaction, the payout locked: move it if the table allows, note why not."""
    target = report.status
    fields = ["upstream_status", "last_polled_at"]
    payout.upstream_status = target.upper()
    if record.source == ChangeSource.POLL:
        payout.last_polled_at = timezone.now()
    if report.created_at is not None and payout.upstream_created_at is None:
        payout.upstream_created_at = report.created_at  # the ledger's date of the debit
        fields.append("upstream_created_at")
    previous = str(payout.status)
    if target == payout.status:
        record.note = ALREADY
        if report.moved_at is not None:  # a later report says when the upstream made the move
            payout.status_changes.filter(to_status=target, upstream_at=None).update(
                upstream_at=report.moved_at
            )
    elif can_move(payout.status, target):
        if target in (S.FAILED, S.RETURNED) and report.reason:
            payout.failure_reason = report.reason[:200]
            fields.append("failure_reason")
        payout.save(update_fields=fields)
        payout_transition(
            payout,
            target,
            source=record.source,
            reason=record.event_type if record.source == ChangeSource.EVENT else "found by polling",
            # Our clock: when PayOps learned it (the upstream's own time is kept on the event
            # record); a skewed upstream clock must not reorder the timeline or the polling.
            at=timezone.now(),
            event_id=record.event_id if record.source == ChangeSource.EVENT else "",
            upstream_at=report.moved_at,
        )
        record.applied = True
        if target in (S.FAILED, S.RETURNED):
            kind = NotificationKind.RETURNED if target == S.RETURNED else NotificationKind.FAILED
            status = Label(of="payout_status", value=str(target), lower=True)
            sentence = (
                summary(
                    gettext_noop("Payout %(id)s: %(status)s, %(reason)s"),
                    id=payout.pk,
                    status=status,
                    reason=payout.failure_reason,
                )
                if payout.failure_reason
                else summary(
                    gettext_noop("Payout %(id)s: %(status)s."), id=payout.pk, status=status
                )
            )
            notifications.notify_maker(payout, kind, sentence)
        if record.source == ChangeSource.POLL:
            _report_missed_event(payout, record, previous)
    else:
        record.note = f"{NOT_APPLIED} {payout.status} cannot become {target} (late or out of order)"
    payout.save(update_fields=fields)
    record.save(update_fields=["note", "applied"])


def _report_missed_event(payout: Payout, record: PayoutEvent, previous: str) -> None:
    """A change only polling found means a webhook was lost: tell webhooks, and audit it."""
    # The upstream's own word for the state (a return reads FAILED there, decisions.md 3).
    observed = str((record.data or {}).get("status") or record.status).upper()
    missed_event_record(
        environment=payout.environment,
        object_kind="payout",
        upstream_id=payout.upstream_id or "",
        observed_state=observed,
        previous_state=previous,
        expected_event="payout.status_changed",
        source="payouts poll",
    )
    details = {
        "upstream_id": payout.upstream_id,
        "status": record.status,
        "previous": previous,
        "event_type": "payout.status_changed",
    }
    audit_record(actor=None, action="payout.missed_event", target=payout, details=details)


def replay_unmatched_events(payout: Payout) -> int:
    """Apply, oldest first, the events that named this payout's upstream id before we knew it."""
    waiting = list(
        PayoutEvent.objects.filter(
            environment_id=payout.environment_id, upstream_id=payout.upstream_id, payout=None
        ).order_by("occurred_at", "received_at", "pk")
    )
    for record in waiting:
        record.payout = payout
        record.note = ""
        record.save(update_fields=["payout", "note"])
        report = StatusReport(
            upstream_id=record.upstream_id,
            status=record.status,
            at=record.occurred_at,
            reason=str((record.data or {}).get("reason") or ""),
        )
        try:  # the upstream's own times, read again from what was kept
            told = upstream_status(record.data or {}, event_type=record.event_type)
            report = replace(report, moved_at=told.moved_at, created_at=told.created_at)
        except UnreadableStatus:
            pass
        _apply(payout, record, report)
    return len(waiting)


def is_final(payout: Payout) -> bool:
    return payout.status in FINAL
