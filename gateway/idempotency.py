"""Idempotency keys persisted with their business object before the first upstream call."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.db import IntegrityError, models, transaction

from gateway.models import IdempotencyKey


def _identity(obj: models.Model) -> tuple[str, str]:
    return obj._meta.label_lower, str(obj.pk)


def key_for(*, scope: str, obj: models.Model) -> str:
    """
    The idempotency key of `scope` (e.g. "payout_initiate") for `obj`: created and committed on
    first use, the same key on every later call (a retry, a re-run task after a crash).
    """
    if obj.pk is None:
        raise ValueError("save the business object before asking for its idempotency key")
    object_type, object_id = _identity(obj)
    try:
        with transaction.atomic():
            record, _ = IdempotencyKey.objects.get_or_create(
                scope=scope, object_type=object_type, object_id=object_id
            )
    except IntegrityError:  # another process created it between our read and write
        record = IdempotencyKey.objects.get(
            scope=scope, object_type=object_type, object_id=object_id
        )
    return str(record.key)


async def akey_for(*, scope: str, obj: models.Model) -> str:
    return await sync_to_async(key_for)(scope=scope, obj=obj)


def forget(*, scope: str, obj: models.Model) -> None:
    """Drop the key once the upstream refused it for good: a corrected one gets a new key."""
    object_type, object_id = _identity(obj)
    IdempotencyKey.objects.filter(
        scope=scope, object_type=object_type, object_id=object_id
    ).delete()
