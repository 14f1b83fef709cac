"""What PayOps did not receive: missed events found by refreshes and polls, silence, no receiver."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from console.broadcast import broadcast_event_on_commit
from gateway.models import Environment
from gateway.selectors import environment_in_use_list
from webhooks.mirrors import mirrors
from webhooks.models import (
    MissedEvent,
    SignatureVerdict,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventLink,
)

# Final states: an object in any other state is "in flight" and should still produce events.
_FINAL = {
    "payout": {"COMPLETED", "FAILED", "CANCELLED"},
    "virtual_account": {"ACTIVE", "FAILED", "FROZEN", "DEACTIVATED"},
    "user": {"VERIFIED", "REJECTED"},
}


def missed_event_record(
    *,
    environment: Environment,
    object_kind: str = "",
    upstream_id: str = "",
    observed_state: str = "",
    previous_state: str = "",
    expected_event: str = "",
    source: str = "",
    event_type: str = "",
    object_id: str = "",
    detail: dict[str, Any] | None = None,
) -> MissedEvent | None:
    """
    Refresh and poll code calls this when it finds an object in a state no event announced. If an
    event naming the object with that state is in fact stored (it raced the poll), nothing is
    recorded and None is returned; otherwise the gap is kept and shown in the inspector.

    Two spellings are accepted, so every caller can use the words it has: `object_kind`,
    `upstream_id`, `observed_state`, `expected_event`; or `event_type` (the event that should
    have come, e.g. "payout.status_changed"), `object_id` and `detail` (`{"status": ...}`).
    """
    detail = detail or {}
    expected_event = expected_event or event_type
    upstream_id = upstream_id or object_id or str(detail.get("upstream_id", ""))
    observed_state = observed_state or str(detail.get("status", ""))
    object_kind = object_kind or expected_event.split(".", 1)[0]
    source = source or str(detail.get("source", "")) or "refresh or poll"
    if not upstream_id or not observed_state:
        raise ValueError("missed_event_record needs the object's upstream id and its state")
    candidates = WebhookEvent.objects.filter(
        environment=environment,
        pk__in=WebhookEventLink.objects.filter(upstream_id=upstream_id).values("event_id"),
    ).order_by("-received_at")[:50]
    wanted = observed_state.upper()
    for event in candidates:
        data = event.data
        states = {str(data.get(key, "")).upper() for key in ("status", "verification_status")}
        nested = data.get("data")
        if isinstance(nested, dict):
            states.add(str(nested.get("status", "")).upper())
        if wanted in states:
            return None
    with transaction.atomic():
        missed = MissedEvent.objects.create(
            environment=environment,
            object_kind=object_kind[:40],
            upstream_id=upstream_id[:100],
            observed_state=observed_state[:100],
            previous_state=previous_state[:100],
            expected_event=expected_event[:100],
            source=source[:100],
        )
        broadcast_event_on_commit(
            "webhooks.missed_event",
            {"kind": object_kind, "upstream_id": upstream_id, "state": observed_state},
        )
    return missed


@dataclass(frozen=True)
class Silence:
    environment: Environment
    last_valid_at: datetime | None
    minutes: int
    in_flight: int


def _in_flight(environment: Environment, since: datetime) -> set[tuple[str, str]]:
    """
    Objects the upstream still owes news about: those whose latest event leaves them in a
    non-final state (from what we received), and those the mirroring apps name as open (e.g.
    payouts submitted and not final: they count even when none of their events ever arrived).
    """
    latest: dict[tuple[str, str], str] = {}
    links = (
        WebhookEventLink.objects.filter(
            event__environment=environment,
            event__received_at__gte=since,
            kind__in=list(_FINAL),
        )
        .select_related("event")
        .order_by("event__received_at")[:5000]
    )
    for link in links:
        data = link.event.data
        nested = data.get("data")
        state = data.get("status") or (nested.get("status") if isinstance(nested, dict) else None)
        if link.kind == "user":
            state = data.get("verification_status") or state
        if state:
            latest[(link.kind, link.upstream_id)] = str(state).upper()
    found = {key for key, state in latest.items() if state not in _FINAL[key[0]]}
    for mirror in mirrors():
        if mirror.open_ids is not None:
            found |= {(mirror.kind, upstream_id) for upstream_id in mirror.open_ids(environment)}
    return found


def silences(*, now: datetime | None = None, minutes: int | None = None) -> list[Silence]:
    """Environments with no valid event for `minutes` (default WEBHOOKS_SILENCE_MINUTES; an
    alert rule gives its own) while objects are in flight."""
    now = now or timezone.now()
    limit = timedelta(minutes=minutes or settings.WEBHOOKS_SILENCE_MINUTES)
    last_valid = dict(
        WebhookDelivery.objects.filter(verdict=SignatureVerdict.VALID)
        .values_list("endpoint__environment_id")
        .annotate(last=Max("received_at"))
    )
    found = []
    for environment in Environment.objects.filter(webhook_endpoint__isnull=False, is_active=True):
        last = last_valid.get(environment.pk)
        if last is not None and now - last < limit:
            continue
        in_flight = len(_in_flight(environment, now - timedelta(days=7)))
        if in_flight:
            found.append(Silence(environment, last, int(limit.total_seconds() // 60), in_flight))
    return found


def receivers_missing() -> list[Environment]:
    """
    Active environments with no receiver registered upstream although they are in use (staff
    work in them: gateway.selectors.environment_in_use_list) or hold open records (the mirrors'
    `open_ids`): nothing pushes their events, so pages wait for polling.
    """
    registered = set(
        WebhookEndpoint.objects.filter(registered_at__isnull=False)
        .exclude(secret_encrypted="")
        .values_list("environment_id", flat=True)
    )
    wanted = {e.pk: e for e in environment_in_use_list()}
    for environment in Environment.objects.filter(is_active=True).exclude(pk__in=wanted):
        if any(m.open_ids is not None and m.open_ids(environment) for m in mirrors()):
            wanted[environment.pk] = environment
    return sorted(
        (e for pk, e in wanted.items() if pk not in registered), key=lambda e: e.name.casefold()
    )


def drift_summary(
    *, since: datetime | None = None, environment: Environment | None = None
) -> dict[str, Any]:
    since = since or timezone.now() - timedelta(days=7)
    events = WebhookEvent.objects.filter(has_drift=True, received_at__gte=since)
    if environment is not None:
        events = events.filter(environment=environment)
    counts: dict[str, int] = {}
    for drift in events.values_list("drift", flat=True)[:5000]:
        for item in drift or []:
            counts[item.get("kind", "?")] = counts.get(item.get("kind", "?"), 0) + 1
    return {"events": events.count(), "by_kind": counts}
