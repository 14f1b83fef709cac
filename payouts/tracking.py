"""Tracking to the final state: apply upstream events (idempotent, order-tolerant) and poll."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from gateway.client import call_sync, upstream
from gateway.errors import BudgetExhausted, UpstreamError
from gateway.models import Environment
from payouts import live, notifications
from payouts.models import (
    ChangeSource,
    NotificationKind,
    Payout,
    PayoutEvent,
    PayoutStatus,
)
from payouts.states import FINAL, can_move, payout_transition
from payouts.upstream_status import StatusReport, UnreadableStatus, upstream_status
from staff.services import audit_record

logger = logging.getLogger("payouts")
S = PayoutStatus

# Upstream states that are waiting on someone else: polled when nothing was heard for a while.
NOT_FINAL_UPSTREAM = frozenset(
    {S.SUBMITTING, S.CREATED, S.PENDING, S.PROCESSING, S.IN_REVIEW, S.KYT_PENDING, S.COMPLETED}
)


def payout_apply_event(
    *, environment: Environment, event_type: str, data: dict[str, Any]
) -> Payout | None:
    """
    Apply one upstream `payout.*` event (the webhooks app's dispatch table calls this). Safe to
    call twice with the same event (its `event_id` is recorded once) and in any order (a status
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
    previous = str(payout.status)
    if target == payout.status:
        record.note = "already in this state"
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
        )
        record.applied = True
        if target in (S.FAILED, S.RETURNED):
            kind = NotificationKind.RETURNED if target == S.RETURNED else NotificationKind.FAILED
            why = f": {payout.failure_reason}" if payout.failure_reason else ""
            notifications.notify_maker(payout, kind, f"Payout {payout.pk} {target}{why}")
        if record.source == ChangeSource.POLL:
            _report_missed_event(payout, record, previous)
        live.payout_changed(payout)
    else:
        record.note = f"not applied: {payout.status} cannot become {target} (late or out of order)"
    payout.save(update_fields=fields)
    record.save(update_fields=["note", "applied"])


def _report_missed_event(payout: Payout, record: PayoutEvent, previous: str) -> None:
    """
    A change only polling found means a webhook was lost: tell the webhooks inspector. The hook
    is `webhooks.services.missed_event_record`; until that app provides it, the audit trail
    keeps the fact (action `payout.missed_event`).
    """
    import importlib

    try:
        webhook_services = importlib.import_module("webhooks.services")
    except ImportError:
        webhook_services = None
    hook = getattr(webhook_services, "missed_event_record", None)
    details = {
        "upstream_id": payout.upstream_id,
        "status": record.status,
        "previous": previous,
        "event_type": "payout.status_changed",
    }
    if hook is not None:
        # The upstream's own word for the state (a return reads FAILED there, decisions.md 3).
        observed = str((record.data or {}).get("status") or record.status).upper()
        hook(
            environment=payout.environment,
            object_kind="payout",
            upstream_id=payout.upstream_id,
            observed_state=observed,
            previous_state=str(details.get("previous") or ""),
            expected_event="payout.status_changed",
            source="payouts poll",
        )
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
        _apply(payout, record, report)
    return len(waiting)


def payouts_poll(*, environment: Environment | None = None) -> int:
    """
    The safety net behind webhooks: for payouts not final after PAYOUTS_POLL_AFTER_SECONDS, read
    the upstream's list (within the gateway's background budget) and apply what changed. Returns
    the number of changes applied.
    """
    now = timezone.now()
    quiet_since = now - timedelta(seconds=settings.PAYOUTS_POLL_AFTER_SECONDS)
    # Completed is not final (a return may follow) but is watched only for a while.
    watch_returns_since = now - timedelta(days=settings.PAYOUTS_RETURN_WATCH_DAYS)
    candidates = (
        Payout.objects.filter(status__in=NOT_FINAL_UPSTREAM, updated_at__lt=quiet_since)
        .filter(Q(last_polled_at__isnull=True) | Q(last_polled_at__lt=quiet_since))
        .exclude(status=S.COMPLETED, updated_at__lt=watch_returns_since)
        .exclude(upstream_id=None)
    )
    if environment is not None:
        candidates = candidates.filter(environment=environment)
    by_environment: dict[int, dict[str, Any]] = {}
    for env_id, upstream_id, created_at in candidates.values_list(
        "environment_id", "upstream_id", "created_at"
    ):
        entry = by_environment.setdefault(env_id, {"ids": set(), "since": created_at})
        entry["ids"].add(upstream_id)
        entry["since"] = min(entry["since"], created_at)
    applied = 0
    for env_id, entry in by_environment.items():
        env = Environment.objects.get(pk=env_id)
        applied += _poll_environment(env, wanted=entry["ids"], since=entry["since"])
    return applied


def _poll_environment(environment: Environment, *, wanted: set[str], since: Any) -> int:
    client = upstream(environment, background=True)
    applied = 0
    remaining = set(wanted)
    page = 1
    from_date = (since - timedelta(days=1)).date()
    while remaining:
        try:
            listing = call_sync(client.payouts.list, from_date=from_date, page=page, limit=100)
        except BudgetExhausted:
            logger.info("payout polling stopped: background budget spent")
            break
        except UpstreamError as exc:
            logger.warning("payout polling of environment %s failed: %s", environment.pk, exc)
            break
        for item in listing.payouts:
            if item.payout_id not in remaining:
                continue
            remaining.discard(item.payout_id)
            raw = item.model_dump(mode="json")
            try:
                report = upstream_status(raw)
            except UnreadableStatus:
                continue
            before = (
                Payout.objects.filter(environment=environment, upstream_id=report.upstream_id)
                .values_list("status", flat=True)
                .first()
            )
            payout = payout_apply_report(
                environment=environment,
                report=report,
                source=ChangeSource.POLL,
                event_type="poll",
                data=raw,
            )
            if payout is not None:
                Payout.objects.filter(pk=payout.pk).update(last_polled_at=timezone.now())
                if before != report.status and payout.status == report.status:
                    applied += 1
        if page >= listing.total_pages:
            break
        page += 1
    return applied


def is_final(payout: Payout) -> bool:
    return payout.status in FINAL
