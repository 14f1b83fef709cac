"""Store every delivery raw, then the event once per (environment, event_id); queue the rest."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from staff import crypto
from webhooks import contract
from webhooks.envelope import envelope_parse
from webhooks.models import (
    EventStatus,
    SecretSlot,
    SignatureVerdict,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventLink,
)
from webhooks.services.live import event_groups, event_message, event_record
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


def endpoint_secrets(endpoint: WebhookEndpoint) -> list[tuple[str, str]]:
    """The secrets a delivery may be signed with, in the order they are tried."""
    secrets = []
    if endpoint.secret_encrypted:
        secrets.append((SecretSlot.CURRENT.value, _plaintext(endpoint.secret_encrypted)))
    if endpoint.pending_secret_encrypted:
        secrets.append((SecretSlot.PENDING.value, _plaintext(endpoint.pending_secret_encrypted)))
    if endpoint.previous_accepted():
        secrets.append((SecretSlot.PREVIOUS.value, _plaintext(endpoint.previous_secret_encrypted)))
    return secrets


def _plaintext(ciphertext: str) -> str:
    return _decrypt_cached(ciphertext, tuple(settings.PAYOPS_ENCRYPTION_KEYS))


@lru_cache(maxsize=64)
def _decrypt_cached(ciphertext: str, keys: tuple[str, ...]) -> str:
    """
    A secret decrypted once per process instead of on every delivery (a Fernet decrypt is an
    HMAC and an AES pass, ~0.15 ms here).

    Keyed on the ciphertext itself, read in the same query as the rest of the endpoint: a
    rotation in any process writes a new ciphertext (Fernet tokens are never reused), so the
    next request misses and decrypts the new secret; nothing needs invalidating. The keys are
    part of the key so that a changed key list is never answered from the cache. Whether the
    previous secret is still accepted is decided per request, never cached.
    """
    return crypto.decrypt(ciphertext)


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
    # Only environment_id is needed from the environment: no join. order_by() drops the model's
    # ordering by environment name, which would otherwise join gateway_environment to sort one row.
    endpoint = WebhookEndpoint.objects.filter(receiver_id=receiver_id).order_by().first()
    if endpoint is None:
        return ReceiverAnswer(404, "unknown receiver")

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

    if body is None or body_size > settings.WEBHOOKS_MAX_BODY_BYTES:
        return refuse(SignatureVerdict.TOO_LARGE, "body too large", 413)
    secrets = endpoint_secrets(endpoint)
    signature = headers.get("x-signature-sha256")
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
    candidate: WebhookEvent, *, delivery: Callable[..., WebhookDelivery], known: bool
) -> tuple[dict[str, Any], list[str]]:
    """
    The common case: a new event, its delivery, its links and its task row in one transaction
    of one INSERT each, with no SELECT and no savepoint. A twin (a redelivery, or a concurrent
    duplicate whose INSERT waited for ours on PostgreSQL) fails the unique constraint on the
    first statement and raises IntegrityError; the whole transaction is then rolled back
    (nothing of it is kept, the task row included). Returns the live message and its groups.
    """
    with _write_turn(), transaction.atomic():
        candidate.save(force_insert=True)
        delivery(candidate, duplicate=False).save(force_insert=True)
        WebhookEventLink.objects.bulk_create(
            [
                WebhookEventLink(event=candidate, kind=kind, upstream_id=upstream_id)
                for kind, upstream_id in dict.fromkeys(
                    contract.named_objects(candidate.event_type, candidate.data)
                )
            ],
            ignore_conflicts=True,
        )
        if known:
            _queue_processing(candidate.pk)
        live = (event_message(candidate), event_groups(candidate))
        event_record(*live)
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

    def delivery(event: WebhookEvent, *, duplicate: bool) -> WebhookDelivery:
        return WebhookDelivery(
            endpoint=endpoint,
            event=event,
            headers=safe_headers(headers),
            body=body,
            body_size=len(body),
            verdict=SignatureVerdict.VALID,
            matched_secret=check.matched_secret,
            signed_over=check.signed_over,
            signature=headers.get("x-signature-sha256", "")[:200],
            response_status=200,
            duplicate=duplicate,
            duration_ms=(time.perf_counter() - started) * 1000,
        )

    try:
        live = _event_insert(candidate, delivery=delivery, known=known)
    except IntegrityError:
        if not WebhookEvent.objects.filter(
            environment_id=candidate.environment_id, event_id=candidate.event_id
        ).exists():
            raise  # not the (environment, event_id) constraint: a real fault
        # The twin is stored: the delivery goes against it.
        event = _duplicate_record(candidate, envelope=envelope, delivery=delivery)
        return ReceiverAnswer(200, "duplicate", event.pk)
    reason = "stored" if known else "stored (unhandled event type)"
    return ReceiverAnswer(200, reason, candidate.pk, broadcast=live)


def _duplicate_record(
    candidate: WebhookEvent,
    *,
    envelope: dict[str, Any],
    delivery: Callable[..., WebhookDelivery],
) -> WebhookEvent:
    """A redelivery: count it on the stored event, flag a differing body, keep the delivery."""
    with _write_turn(), transaction.atomic():
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
        delivery(event, duplicate=True).save(force_insert=True)
    return event


_sqlite_writer = threading.Lock()


@contextmanager
def _write_turn() -> Iterator[None]:
    """
    On the embedded SQLite, one receiver write transaction at a time per process.

    SQLite admits one writer; a thread that finds the write lock taken sleeps in SQLite's busy
    handler (1, 2, 5, 10, ... 100 ms steps) instead of waking when the lock frees, which is what
    the slowest acknowledgements were made of with 8 concurrent senders. Queuing on a Python lock
    wakes the next sender at once. Other processes (the worker) still meet the busy timeout.
    Not taken inside an outer transaction (which may already hold SQLite's lock) nor on other
    databases, where writers do not exclude each other.
    """
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        yield
        return
    with _sqlite_writer:
        yield


_broker: Any = None


def _queue_processing(event_pk: int) -> None:
    """Queue the event's processing so that it runs only once the event is committed.

    With the ORM broker (the embedded default) the task row is written inside the event's own
    transaction: it becomes visible exactly when the event does, and costs one insert. With
    Redis the push waits for the commit (on_commit), or a worker could look before it exists.
    Either way a lost push is not a lost event: PENDING events are swept by the retry schedule.
    """
    from django_q.brokers import get_broker
    from django_q.conf import Conf
    from django_q.tasks import async_task

    from webhooks.tasks import webhook_event_process_task

    global _broker
    if _broker is None:
        _broker = get_broker()

    def push() -> None:
        async_task(webhook_event_process_task, event_pk, "receipt", broker=_broker)

    if Conf.ORM and not Conf.SYNC:
        push()
    else:
        transaction.on_commit(push)
