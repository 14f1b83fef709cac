"""Store every delivery raw, then the event once per (environment, event_id); queue the rest.

The endpoint and its secrets come from `receiver_endpoint` (cached per process), the rows are
written by `event_rows` (prepared INSERTs).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from webhooks import contract
from webhooks.envelope import envelope_parse
from webhooks.models import (
    EventStatus,
    SignatureVerdict,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventLink,
)
from webhooks.services.event_rows import row_insert, write_turn
from webhooks.services.live import event_groups, event_message, event_record
from webhooks.services.receiver_endpoint import (
    EndpointChanged,
    endpoint_load,
    endpoint_same,
    endpoint_secrets,
)
from webhooks.signatures import SignatureCheck, verify_signature

# Headers never stored with a delivery: credentials a misconfigured sender or proxy might add.
_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "x-api-key", "x-emulator-token"}
)


@dataclass(frozen=True)
class ReceiverAnswer:
    """What the receiver view answers; never a 5xx for anything the sender controls."""

    status: int
    reason: str
    event_pk: int | None = None
    # For a newly stored event: the live message and its groups, sent by the async view once
    # the transaction has committed (no thread hop for the broadcast; on the embedded default
    # the outbox rows for other processes were written in that transaction).
    broadcast: tuple[dict[str, Any], list[str]] | None = None

    def body(self) -> dict[str, Any]:
        return {"status": "accepted" if self.status == 200 else "rejected", "reason": self.reason}


def safe_headers(headers: dict[str, str]) -> dict[str, str]:
    return {
        key.lower(): value[:500]
        for key, value in headers.items()
        if key.lower() not in _SECRET_HEADERS
    }


def _store_refused(
    *,
    endpoint: WebhookEndpoint,
    headers: dict[str, str],
    body: bytes,
    body_size: int,
    verdict: str,
    reason: str,
    status: int,
    check: SignatureCheck | None,
    started: float,
) -> None:
    """Keep a refused delivery for diagnosis, within the hourly cap and the body limit."""
    since = timezone.now() - timedelta(hours=1)
    stored = WebhookDelivery.objects.filter(
        endpoint=endpoint, received_at__gte=since, event__isnull=True
    ).count()
    if stored >= settings.WEBHOOKS_INVALID_DELIVERIES_PER_HOUR:
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
            invalid_not_stored=F("invalid_not_stored") + 1
        )
        return
    limit = settings.WEBHOOKS_INVALID_BODY_LIMIT
    WebhookDelivery.objects.create(
        endpoint=endpoint,
        headers=safe_headers(headers),
        body=body[:limit],
        body_truncated=len(body) > limit or body_size > len(body),
        body_size=body_size,
        verdict=verdict,
        signature=headers.get("x-signature-sha256", "")[:200],
        reason=reason[:200],
        response_status=status,
        duration_ms=(time.perf_counter() - started) * 1000,
        matched_secret=check.matched_secret if check else "",
        signed_over=check.signed_over if check else "",
    )


def delivery_receive(
    *,
    receiver_id: str,
    headers: dict[str, str],
    body: bytes | None,
    body_size: int,
    started: float,
) -> ReceiverAnswer:
    """
    Everything the receiver does with one request, in one place. `body` is None when it was too
    large to read. The delivery row is written before the answer is returned, refused ones
    included (capped); a valid event is stored once and its processing queued after commit.
    """
    headers = {key.lower(): value for key, value in headers.items()}
    try:
        return _delivery_judge(
            receiver_id=receiver_id,
            headers=headers,
            body=body,
            body_size=body_size,
            started=started,
            fresh=False,
        )
    except EndpointChanged:
        # Rotated, registered or removed while this delivery was being stored: nothing of it
        # was kept; judge it again against the row as it is now.
        return _delivery_judge(
            receiver_id=receiver_id,
            headers=headers,
            body=body,
            body_size=body_size,
            started=started,
            fresh=True,
        )


def _delivery_judge(
    *,
    receiver_id: str,
    headers: dict[str, str],
    body: bytes | None,
    body_size: int,
    started: float,
    fresh: bool,
) -> ReceiverAnswer:
    too_large = body is None or body_size > settings.WEBHOOKS_MAX_BODY_BYTES
    # A refusal is always judged on the row as it is now (refusals are rare, a read is cheap).
    loaded = endpoint_load(receiver_id, fresh=fresh or too_large)
    if loaded is None:
        return ReceiverAnswer(404, "unknown receiver")
    endpoint: WebhookEndpoint = loaded

    def refuse(verdict: str, reason: str, status: int, check: SignatureCheck | None = None) -> Any:
        _store_refused(
            endpoint=endpoint,
            headers=headers,
            body=body or b"",
            body_size=body_size,
            verdict=verdict,
            reason=reason,
            status=status,
            check=check,
            started=started,
        )
        return ReceiverAnswer(status, reason)

    if body is None or too_large:
        return refuse(SignatureVerdict.TOO_LARGE, "body too large", 413)
    secrets = endpoint_secrets(endpoint)
    signature = headers.get("x-signature-sha256")
    check = verify_signature(body=body, header=signature, secrets=secrets)
    if not check.valid and not fresh:
        # Perhaps signed with a secret stored since this process cached the row: read it again.
        reread = endpoint_load(receiver_id, fresh=True)
        if reread is None:
            return ReceiverAnswer(404, "unknown receiver")
        endpoint = reread
        secrets = endpoint_secrets(endpoint)
        check = verify_signature(body=body, header=signature, secrets=secrets)
    if not check.valid:
        if not signature:
            return refuse(SignatureVerdict.MISSING, check.reason, 400)
        verdict = SignatureVerdict.NO_SECRET if not secrets else SignatureVerdict.INVALID
        return refuse(verdict, check.reason, 400, check)
    envelope, problem = envelope_parse(body)
    if envelope is None:
        return refuse(SignatureVerdict.MALFORMED, problem, 400, check)
    return _store_event(
        endpoint=endpoint,
        headers=headers,
        body=body,
        envelope=envelope,
        check=check,
        started=started,
    )


def _event_candidate(endpoint: WebhookEndpoint, envelope: dict[str, Any]) -> WebhookEvent:
    """The event row a valid envelope makes (not saved): known or unhandled, with its drift."""
    event_type: str = envelope["event"]
    data: dict[str, Any] = envelope["data"]
    drift = contract.contract_drift(event_type, data)
    return WebhookEvent(
        environment_id=endpoint.environment_id,
        event_id=data["event_id"],
        event_type=event_type,
        payload=envelope,
        status=EventStatus.PENDING if event_type in contract.EVENT_KINDS else EventStatus.UNHANDLED,
        drift=drift,
        has_drift=bool(drift),
        object_ids=" ".join(contract.upstream_ids(data)),
    )


def _event_insert(
    candidate: WebhookEvent,
    *,
    endpoint: WebhookEndpoint,
    delivery: Callable[..., dict[str, Any]],
    known: bool,
) -> tuple[dict[str, Any], list[str]]:
    """
    The common case: a new event, its delivery and its links in one transaction of one INSERT
    each (the event is the work item: no task row), with no savepoint; the endpoint's secrets
    are read back just before COMMIT (`endpoint_same`). A twin (a redelivery, or a concurrent
    duplicate whose INSERT waited for ours on PostgreSQL) fails the unique constraint on the
    first statement and raises IntegrityError; the whole transaction is then rolled back.
    Returns the live message and its groups.
    """
    with write_turn(), transaction.atomic():
        candidate.pk = row_insert(WebhookEvent, candidate.__dict__)
        candidate._state.adding = False
        row_insert(WebhookDelivery, delivery(candidate, duplicate=False))
        for kind, upstream_id in dict.fromkeys(
            contract.named_objects(candidate.event_type, candidate.data)
        ):
            row_insert(
                WebhookEventLink,
                {"event_id": candidate.pk, "kind": kind, "upstream_id": upstream_id},
            )
        if known:
            _processing_wake(candidate.pk)
        live = (event_message(candidate), event_groups(candidate))
        event_record(*live)
        endpoint_same(endpoint)
    return live


def _store_event(
    *,
    endpoint: WebhookEndpoint,
    headers: dict[str, str],
    body: bytes,
    envelope: dict[str, Any],
    check: SignatureCheck,
    started: float,
) -> ReceiverAnswer:
    candidate = _event_candidate(endpoint, envelope)
    known = candidate.status == EventStatus.PENDING

    def delivery(event: WebhookEvent, *, duplicate: bool) -> dict[str, Any]:
        """The delivery row's values, by attribute name (for `row_insert`)."""
        return {
            "endpoint_id": endpoint.pk,
            "event_id": event.pk,
            "headers": safe_headers(headers),
            "body": body,
            "body_size": len(body),
            "verdict": SignatureVerdict.VALID.value,
            "matched_secret": check.matched_secret,
            "signed_over": check.signed_over,
            "signature": headers.get("x-signature-sha256", "")[:200],
            "response_status": 200,
            "duplicate": duplicate,
            "duration_ms": (time.perf_counter() - started) * 1000,
        }

    try:
        live = _event_insert(candidate, endpoint=endpoint, delivery=delivery, known=known)
    except IntegrityError:
        if not WebhookEvent.objects.filter(
            environment_id=candidate.environment_id, event_id=candidate.event_id
        ).exists():
            raise  # not the (environment, event_id) constraint: a real fault
        # The twin is stored: the delivery goes against it.
        event = _duplicate_record(
            candidate, endpoint=endpoint, envelope=envelope, delivery=delivery
        )
        return ReceiverAnswer(200, "duplicate", event.pk)
    reason = "stored" if known else "stored (unhandled event type)"
    return ReceiverAnswer(200, reason, candidate.pk, broadcast=live)


def _duplicate_record(
    candidate: WebhookEvent,
    *,
    endpoint: WebhookEndpoint,
    envelope: dict[str, Any],
    delivery: Callable[..., dict[str, Any]],
) -> WebhookEvent:
    """A redelivery: count it on the stored event, flag a differing body, keep the delivery."""
    with write_turn(), transaction.atomic():
        event = WebhookEvent.objects.get(
            environment_id=candidate.environment_id, event_id=candidate.event_id
        )
        changes: dict[str, Any] = {"delivery_count": F("delivery_count") + 1}
        if event.payload != envelope and not any(
            item.get("kind") == "duplicate_differs" for item in event.drift
        ):
            # Same event_id, other content: kept as delivered, flagged, never applied.
            changes["drift"] = [
                *event.drift,
                {"kind": "duplicate_differs", "detail": "a redelivery had another body"},
            ]
            changes["has_drift"] = True
        WebhookEvent.objects.filter(pk=event.pk).update(**changes)
        row_insert(WebhookDelivery, delivery(event, duplicate=True))
        endpoint_same(endpoint)
    return event


def _processing_wake(event_pk: int) -> None:
    """
    The stored event is the work item: no task row is written for it. Once the event commits,
    the processors (webhooks.services.processor, a thread in each worker) are told to look now;
    a lost wake-up only means the processor's next poll finds the event. With django-q2 running
    tasks inline (tests), the event is processed right after the commit instead.
    """
    from django_q.conf import Conf

    from webhooks.services.processor import processors_wake

    if Conf.SYNC:
        from webhooks.services.processing import webhook_event_process

        transaction.on_commit(lambda: webhook_event_process(event_pk=event_pk, trigger="receipt"))
    else:
        transaction.on_commit(processors_wake)
