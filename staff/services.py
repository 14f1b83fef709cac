"""Staff writes: the audit trail every app records its actions in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

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


def audit_record(
    *,
    actor: StaffUser | None,
    action: str,
    target: models.Model | None = None,
    details: dict[str, Any] | None = None,
) -> AuditEntry:
    """Record that actor (None: the system) did action to target; secret-looking keys are redacted.

    Call it inside the service's transaction so the entry exists exactly when the change does.
    `details` may hold Decimals, dates and UUIDs: they are stored as their JSON string forms.
    """
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None  # AnonymousUser and friends are "the system" here
    details = {**(details or {}), **(_AUDIT_CONTEXT.get() or {})}
    safe_details = json.loads(json.dumps(scrub(details), cls=DjangoJSONEncoder))
    target_type = target_id = ""
    if target is not None:
        target_type = target._meta.label_lower
        target_id = str(target.pk)
    return AuditEntry.objects.create(
        actor=actor,
        action=action,
        target_type=target_type,
        target_id=target_id,
        details=safe_details,
    )
