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
from django.db import IntegrityError, connection, models, transaction
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


# --- The endpoint, cached per process ------------------------------------------------------------
#
# Loading the endpoint row was a fifth of a delivery's time. Each process keeps the rows it has
# read, keyed on the receiver path. What can change on a row (a registration, a rotation, a
# confirmed rotation, the end of an overlap window, a key rotation re-encrypting the secrets, a
# deletion) is caught without an extra round trip:
# - a delivery that does not verify against the cached secrets is checked again against the row
#   read afresh (a secret added anywhere is accepted at once: a new pending or current secret);
# - a delivery that verifies is stored only if the row's secrets are still those it was checked
#   with: the event's own transaction reads them back just before its COMMIT (`_endpoint_same`),
#   and on any difference the transaction is rolled back and the delivery judged again on the
#   fresh row (a secret retired anywhere is refused at once).
# Whether the previous secret is still inside its window is decided per request, never cached.

_endpoints: dict[str, WebhookEndpoint] = {}
_ENDPOINT_VERSION_FIELDS = (
    "secret_encrypted",
    "pending_secret_encrypted",
    "previous_secret_encrypted",
    "previous_valid_until",
)


def _endpoint_version(endpoint: WebhookEndpoint) -> tuple[Any, ...]:
    return tuple(getattr(endpoint, field) for field in _ENDPOINT_VERSION_FIELDS)


def _endpoint_load(receiver_id: str, *, fresh: bool) -> WebhookEndpoint | None:
    """The receiver's endpoint, from this process's cache unless `fresh` (one SELECT)."""
    if not fresh:
        cached = _endpoints.get(receiver_id)
        if cached is not None:
            return cached
    # Only environment_id is needed from the environment: no join. order_by() drops the model's
    # ordering by environment name, which would otherwise join gateway_environment.
    endpoint = WebhookEndpoint.objects.filter(receiver_id=receiver_id).order_by().first()
    if endpoint is None:
        _endpoints.pop(receiver_id, None)
    else:
        if len(_endpoints) > 256:
            _endpoints.clear()
        _endpoints[receiver_id] = endpoint
    return endpoint


class _EndpointChanged(Exception):
    """The endpoint's secrets changed since the delivery was verified: judge it again."""


def _endpoint_same(endpoint: WebhookEndpoint) -> None:
    """Inside the storing transaction, just before COMMIT: the row still carries the secrets the
    delivery was verified with (one indexed read on the connection already in use)."""
    with connection.cursor() as cursor:
        cursor.execute(_endpoint_version_sql(connection.vendor), [endpoint.pk])
        row = cursor.fetchone()
    if row is None:
        raise _EndpointChanged
    fields = [WebhookEndpoint._meta.get_field(name) for name in _ENDPOINT_VERSION_FIELDS]
    converted = tuple(_from_db(field, value) for field, value in zip(fields, row, strict=True))
    if converted != _endpoint_version(endpoint):
        raise _EndpointChanged


@lru_cache(maxsize=4)
def _endpoint_version_sql(vendor: str) -> str:
    quote = connection.ops.quote_name
    meta = WebhookEndpoint._meta
    columns = ", ".join(
        quote(str(WebhookEndpoint._meta.get_field(name).column))  # type: ignore[union-attr]
        for name in _ENDPOINT_VERSION_FIELDS
    )
    table, key = quote(meta.db_table), quote(str(meta.pk.column))
    # Names from the model's metadata, quoted; the only value is a parameter.
    return f"SELECT {columns} FROM {table} WHERE {key} = %s"  # noqa: S608


def _from_db(field: Any, value: Any) -> Any:
    """A column's value as the ORM would have loaded it (SQLite returns datetimes as text)."""
    for converter in connection.ops.get_db_converters(field.get_col(field.model._meta.db_table)):
        value = converter(value, field, connection)
    return value


def endpoint_cache_clear() -> None:
    """Forget this process's endpoints (tests; nothing in the product needs it)."""
    _endpoints.clear()


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
    except _EndpointChanged:
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
    loaded = _endpoint_load(receiver_id, fresh=fresh or too_large)
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
        reread = _endpoint_load(receiver_id, fresh=True)
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


@lru_cache(maxsize=16)
def _insert_statement(model: type[models.Model], vendor: str) -> tuple[str, tuple[Any, ...], bool]:
    """One model's INSERT of every concrete column but the key, built once per process."""
    quote = connection.ops.quote_name
    fields = tuple(f for f in model._meta.concrete_fields if not f.primary_key)
    returning = connection.features.can_return_columns_from_insert
    # Names from the model's metadata, quoted; every value is a parameter.
    sql = "INSERT INTO {} ({}) VALUES ({}){}".format(  # noqa: S608
        quote(model._meta.db_table),
        ", ".join(quote(str(f.column)) for f in fields),
        ", ".join(["%s"] * len(fields)),
        f" RETURNING {quote(str(model._meta.pk.column))}" if returning else "",
    )
    return sql, fields, returning


def _row_insert(model: type[models.Model], values: dict[str, Any]) -> int:
    """
    INSERT one row without building a model instance: the ORM's save() (instance, signals, SQL
    compiled per call) was most of a delivery's CPU. Each value still goes through its field's
    own `get_db_prep_save` (JSON, datetimes, bytes as the backend wants them); a field not given
    takes its default. Only for the receiver's rows, which have no save() logic or signals.
    """
    sql, fields, returning = _insert_statement(model, connection.vendor)
    params = [
        f.get_db_prep_save(
            values[f.attname] if f.attname in values else f.get_default(), connection
        )
        for f in fields
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if returning:
            return int(cursor.fetchone()[0])
        return int(cursor.lastrowid)


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
    are read back just before COMMIT (`_endpoint_same`). A twin (a redelivery, or a concurrent
    duplicate whose INSERT waited for ours on PostgreSQL) fails the unique constraint on the
    first statement and raises IntegrityError; the whole transaction is then rolled back.
    Returns the live message and its groups.
    """
    with _write_turn(), transaction.atomic():
        candidate.pk = _row_insert(WebhookEvent, candidate.__dict__)
        candidate._state.adding = False
        _row_insert(WebhookDelivery, delivery(candidate, duplicate=False))
        for kind, upstream_id in dict.fromkeys(
            contract.named_objects(candidate.event_type, candidate.data)
        ):
            _row_insert(
                WebhookEventLink,
                {"event_id": candidate.pk, "kind": kind, "upstream_id": upstream_id},
            )
        if known:
            _processing_wake(candidate.pk)
        live = (event_message(candidate), event_groups(candidate))
        event_record(*live)
        _endpoint_same(endpoint)
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
        """The delivery row's values, by attribute name (for `_row_insert`)."""
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
        _row_insert(WebhookDelivery, delivery(event, duplicate=True))
        _endpoint_same(endpoint)
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
