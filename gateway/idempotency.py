"""Idempotency keys persisted with their business object before the first upstream call."""

from __future__ import annotations

from django.db import IntegrityError, models, transaction

from gateway.models import IdempotencyKey
from gateway.transport import outside_transaction


def _identity(obj: models.Model) -> tuple[str, str]:
    return obj._meta.label_lower, str(obj.pk)


def key_for(*, scope: str, obj: models.Model) -> str:
    """
    The idempotency key of `scope` (e.g. "payout_initiate") for `obj`: created and committed on
    first use, the same key on every later call (a retry, a re-run task after a crash).

    Refuses to run inside the caller's `transaction.atomic()` (CalledInTransaction): a key
    created there would roll back with the caller, and the re-run would send a new key. Ask for
    the key, and call the upstream, outside the block; record the result in a transaction after.
    """
    if obj.pk is None:
        raise ValueError("save the business object before asking for its idempotency key")
    outside_transaction()
    object_type, object_id = _identity(obj)
    try:
        # durable: Django itself refuses a nested block, and guarantees the commit at its end.
        with transaction.atomic(durable=True):
            record, _ = IdempotencyKey.objects.get_or_create(
                scope=scope, object_type=object_type, object_id=object_id
            )
    except IntegrityError:  # another process created it between our read and write
        record = IdempotencyKey.objects.get(
            scope=scope, object_type=object_type, object_id=object_id
        )
    return str(record.key)


def forget(*, scope: str, obj: models.Model) -> None:
    """Drop the key once the upstream refused it for good: a corrected one gets a new key."""
    object_type, object_id = _identity(obj)
    IdempotencyKey.objects.filter(
        scope=scope, object_type=object_type, object_id=object_id
    ).delete()
