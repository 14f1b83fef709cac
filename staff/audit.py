"""The audit trail's writer: every app's actions recorded in it, chained by hash.

Services write through `staff.actions` (act / record_action), which calls `audit_record` here;
keeping the writer apart lets the staff services use the action helper too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models, transaction
from django.utils import timezone

from staff.audit_chain import chain_head, chain_lock, entry_hash_of
from staff.models import AuditEntry, StaffUser
from staff.redaction import scrub

# What every audit entry recorded inside `audit_context(...)` also carries (e.g. the admin change
# proposal an approval applies: its proposer and approver), whichever service writes the entry.
_AUDIT_CONTEXT: ContextVar[dict[str, Any] | None] = ContextVar("payops_audit_context", default=None)


@contextmanager
def audit_context(**extra: Any) -> Iterator[None]:
    """Add `extra` to the details of every audit entry recorded in this block."""
    token = _AUDIT_CONTEXT.set({**(_AUDIT_CONTEXT.get() or {}), **extra})
    try:
        yield
    finally:
        _AUDIT_CONTEXT.reset(token)


def _stored(value: dict[str, Any] | None) -> Any:
    """A redacted, JSON-ready copy: Decimals, dates and UUIDs as their JSON string forms."""
    return json.loads(json.dumps(scrub(value), cls=DjangoJSONEncoder))


def audit_record(
    *,
    actor: StaffUser | None,
    action: str,
    target: models.Model | None = None,
    details: dict[str, Any] | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> AuditEntry:
    """Record that actor (None: the system) did action to target; secret-looking keys are redacted.

    Call it inside the service's transaction so the entry exists exactly when the change does.
    `details` may hold Decimals, dates and UUIDs: they are stored as their JSON string forms.

    `before` and `after` are what the target looked like before and after the change (only the
    fields the action may change; {} when there was nothing before, e.g. a creation); they are
    redacted like details, and the audit page shows them as a diff. Leave them out (None) when
    the action changes no record's fields.

    The entry is chained to the previous one (staff.audit_chain): the chain's lock is held until
    the caller's transaction ends, so keep work after the audit entry short.
    """
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None  # AnonymousUser and friends are "the system" here
    details = {**(details or {}), **(_AUDIT_CONTEXT.get() or {})}
    target_type = target_id = ""
    if target is not None:
        target_type = target._meta.label_lower
        target_id = str(target.pk)
    fields: dict[str, Any] = {
        "actor_id": actor.pk if actor is not None else None,
        "action": action,
        "target_type": target_type,
        "target_id": target_id,
        "details": _stored(details or {}),
        "before": None if before is None else _stored(before),
        "after": None if after is None else _stored(after),
    }
    with transaction.atomic():
        chain_lock()
        seq, prev_hash = chain_head()
        fields.update(seq=seq + 1, prev_hash=prev_hash, at=timezone.now())
        return AuditEntry.objects.create(**fields, entry_hash=entry_hash_of(fields))
