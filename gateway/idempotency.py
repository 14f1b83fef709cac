"""
The one way PayOps makes its own upstream mutations idempotent: the key lives on the business row.

A model whose creation (or initiation) upstream must happen once inherits `IdempotentModel`: its
`idempotency_key` is created with the row, so it is committed before any upstream call, and a
retry, a double submit or a task re-run after a crash sends the same key (the upstream answers
with the object it already made). Call the upstream outside `transaction.atomic()` and record the
answer in a transaction after (the gateway refuses a call inside one: `CalledInTransaction`).

When the upstream refused a request for good and a corrected one (a changed body) is to be sent,
`renew` gives the row a new key: the old one may only ever be replayed with its first body.
"""

from __future__ import annotations

import uuid

from django.db import models


class IdempotentModel(models.Model):
    """A business row carrying the idempotency key of its own upstream mutation."""

    idempotency_key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)

    class Meta:
        abstract = True


def renew(record: IdempotentModel, *, save: bool = True) -> uuid.UUID:
    """
    Give `record` a new idempotency key: for a corrected request after the upstream refused the
    old one for good. Saved at once, or with the caller's own save of the correction
    (`save=False`); either way inside the transaction that records the correction.
    """
    record.idempotency_key = uuid.uuid4()
    if save:
        record.save(update_fields=["idempotency_key"])
    return record.idempotency_key
