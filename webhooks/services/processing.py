"""Apply stored events to their objects through the contract's dispatch table; retry; reprocess."""

from __future__ import annotations

import functools
import logging
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from console import metrics
from staff.actions import record_action
from webhooks import contract
from webhooks.handlers import HandlerMissing, handler_for
from webhooks.links import link_fill
from webhooks.models import (
    EventStatus,
    ProcessingAttempt,
    ProcessingOutcome,
    ReprocessRun,
    WebhookEvent,
    WebhookEventLink,
)
from webhooks.permissions import WEBHOOKS_MANAGE
from webhooks.services.live import event_broadcast_on_commit

logger = logging.getLogger(__name__)

# A PENDING event no processor took (none running, every wake-up lost) is swept after this.
STALE_PENDING = timedelta(minutes=2)


def retry_delay(attempts: int) -> timedelta:
    """Doubling from WEBHOOKS_RETRY_BASE_SECONDS, capped at WEBHOOKS_RETRY_MAX_SECONDS."""
    base, cap = settings.WEBHOOKS_RETRY_BASE_SECONDS, settings.WEBHOOKS_RETRY_MAX_SECONDS
    return timedelta(seconds=min(cap, base * 2 ** max(0, attempts - 1)))


def _primary_kind(event_type: str) -> str | None:
    kind = contract.EVENT_KINDS.get(event_type)
    if kind is None or not kind.ids:
        return None
    return next(iter(kind.ids.values()))


def _links_update(event: WebhookEvent, touched: Any) -> None:
    primary = _primary_kind(event.event_type)
    for link in event.links.all():
        is_primary = touched is not None and link.kind == primary
        instance = touched if is_primary else None
        if link_fill(link, instance, touched=is_primary, environment=event.environment):
            link.save(update_fields=["content_type", "object_pk", "touched"])


def _event_locked(event_pk: int) -> WebhookEvent | None:
    return (
        WebhookEvent.objects.select_for_update(of=("self",))
        .select_related("environment")
        .filter(pk=event_pk)
        .first()
    )


def _event_apply(event: WebhookEvent) -> tuple[str, str]:
    """Run the event's apply service: its outcome and the error to keep ("" when none)."""
    try:
        handler = handler_for(event.event_type)
    except HandlerMissing as exc:
        return ProcessingOutcome.NO_HANDLER, str(exc)
    try:
        # A savepoint: a failing service leaves nothing half done, and the attempt is still
        # recorded in the outer transaction.
        with transaction.atomic():
            touched = handler(
                environment=event.environment,
                event_type=event.event_type,
                data=event.data,
            )
            _links_update(event, touched)
    except Exception as exc:
        logger.warning("webhook event %s failed: %s", event.event_id, type(exc).__name__)
        return ProcessingOutcome.FAILED, f"{type(exc).__name__}: {exc}"
    return ProcessingOutcome.PROCESSED, ""


def _event_status_set(event: WebhookEvent, *, outcome: str, error: str, now: Any) -> None:
    """The event's status and next attempt after one attempt with this outcome."""
    if outcome == ProcessingOutcome.NO_HANDLER:
        # Not a failure of the event: keep it, look again later, never give up on it.
        event.status = EventStatus.NO_HANDLER
        event.next_attempt_at = now + retry_delay(1)
    else:
        event.attempts += 1
        if outcome == ProcessingOutcome.PROCESSED:
            event.status = EventStatus.PROCESSED
            if event.processed_at is None:  # the first time only: a reprocess is not lag
                lag = (now - event.received_at).total_seconds()
                transaction.on_commit(
                    functools.partial(metrics.webhook_processed_observed, seconds=lag)
                )
            event.processed_at = now
            event.next_attempt_at = None
        else:
            event.status = EventStatus.FAILED
            more = event.attempts < settings.WEBHOOKS_PROCESS_MAX_ATTEMPTS
            event.next_attempt_at = now + retry_delay(event.attempts) if more else None
    event.last_error = error[:2000]
    event.save(
        update_fields=["status", "attempts", "processed_at", "next_attempt_at", "last_error"]
    )


def webhook_event_process(*, event_pk: int, trigger: str = "receipt") -> str:
    """
    Apply one event once: the row is locked for the whole attempt, so a retry and a reprocess
    racing each other run one after the other, and an already processed event is left alone
    unless a person asked to re-run it (`trigger="reprocess"`; apply services are idempotent).
    """
    with transaction.atomic():
        event = _event_locked(event_pk)
        if event is None:
            return "missing"
        return _event_process_locked(event, trigger=trigger)


def webhook_event_claim_next() -> str | None:
    """
    Claim the oldest pending event and process it, in one transaction; None when there is none.

    The claim is the row lock of the processing transaction itself (PostgreSQL: `FOR UPDATE SKIP
    LOCKED`, so concurrent processors each take another event; SQLite: the transaction is
    IMMEDIATE, so processors take turns on the database's write lock). Nothing marks an event as
    claimed outside that transaction: a processor that dies mid-claim leaves no stale claim
    behind, its transaction is rolled back and the event is pending again for the next look.
    """
    with transaction.atomic():
        event = (
            WebhookEvent.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("environment")
            .filter(status=EventStatus.PENDING)
            .order_by("pk")
            .first()
        )
        if event is None:
            return None
        return _event_process_locked(event, trigger="receipt")


def _event_process_locked(event: WebhookEvent, *, trigger: str) -> str:
    """One attempt at a locked event, inside the caller's transaction."""
    now = timezone.now()
    if event.status == EventStatus.UNHANDLED:
        return event.status
    if event.status == EventStatus.PROCESSED and trigger != "reprocess":
        return event.status
    started = time.perf_counter()
    outcome, error = _event_apply(event)
    duration = (time.perf_counter() - started) * 1000
    _event_status_set(event, outcome=outcome, error=error, now=now)
    ProcessingAttempt.objects.create(
        event=event,
        number=event.attempt_log.count() + 1,
        started_at=now,
        duration_ms=duration,
        outcome=outcome,
        error=error[:2000],
        trigger=trigger,
    )
    event_broadcast_on_commit(event)
    return event.status


def webhook_events_retry_due(*, now: Any = None, limit: int = 200) -> int:
    """Run every failed or handler-less event whose retry time has come, and stale pending ones."""
    now = now or timezone.now()
    due = (
        WebhookEvent.objects.filter(
            Q(status__in=[EventStatus.FAILED, EventStatus.NO_HANDLER], next_attempt_at__lte=now)
            | Q(status=EventStatus.PENDING, received_at__lte=now - STALE_PENDING)
        )
        .order_by("received_at")
        .values_list("pk", flat=True)[:limit]
    )
    count = 0
    for pk in list(due):
        webhook_event_process(event_pk=pk, trigger="retry")
        count += 1
    return count


def _require_manage(by: Any) -> None:
    if by is not None and not by.has_perm(WEBHOOKS_MANAGE):
        raise PermissionDenied(gettext("You may not reprocess webhook events."))


def webhook_reprocess_start(
    *, events: QuerySet[WebhookEvent], by: Any, description: str
) -> ReprocessRun:
    """Queue a re-run of a set of events (one, a filtered set, or all failed) with progress."""
    _require_manage(by)
    pks = list(
        events.exclude(status=EventStatus.UNHANDLED)
        .order_by("received_at")
        .values_list("pk", flat=True)[:10_000]
    )
    with transaction.atomic():
        run = ReprocessRun.objects.create(
            created_by=by, description=description[:300], event_ids=pks, total=len(pks)
        )
        # Its progress page follows the run through the run's own messages, once it starts.
        record_action(
            announce=False,
            actor=by,
            action="webhooks.reprocess",
            target=run,
            details={"events": len(pks), "selection": description[:300]},
        )
        run_pk = run.pk

        def queue() -> None:
            from django_q.tasks import async_task

            from webhooks.tasks import webhook_reprocess_run_task

            async_task(webhook_reprocess_run_task, run_pk)

        transaction.on_commit(queue)
    return run


def webhook_reprocess_run(*, run_pk: int) -> ReprocessRun:
    """Work through a run, saving progress after each event (the page polls it)."""
    run = ReprocessRun.objects.get(pk=run_pk)
    for position, pk in enumerate(run.event_ids[run.done :], start=run.done):
        status = webhook_event_process(event_pk=pk, trigger="reprocess")
        failed = status in (EventStatus.FAILED, EventStatus.NO_HANDLER)
        ReprocessRun.objects.filter(pk=run.pk).update(
            done=position + 1, failed=run.failed + int(failed)
        )
        run.failed += int(failed)
    ReprocessRun.objects.filter(pk=run.pk).update(finished_at=timezone.now())
    run.refresh_from_db()
    return run


def links_for(event: WebhookEvent) -> QuerySet[WebhookEventLink]:
    return event.links.select_related("content_type")
