"""Staff writes: the audit trail every app records its actions in, chained by hash."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models, transaction
from django.utils import timezone

from staff.audit_chain import chain_head, chain_lock, entry_hash_of
from staff.errors import ServiceError
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


def staff_language_set(*, user: StaffUser, language: str, by: StaffUser) -> StaffUser:
    """The language the back office speaks to `user` (pages, emails): a code of
    settings.LANGUAGES, or "" for the browser's. Each person chooses their own."""
    if by.pk != user.pk:
        raise PermissionDenied("Each person chooses their own language.")
    if not user.is_active:
        raise PermissionDenied("An inactive account has no language to choose.")
    codes = [code for code, _name in settings.LANGUAGES]
    if language not in ("", *codes):
        raise ServiceError(
            "Choose one of the offered languages.",
            errors=[("language", f"one of {', '.join(codes)}, or empty for the browser's")],
        )
    with transaction.atomic():
        locked = StaffUser.objects.select_for_update().get(pk=user.pk)
        before = locked.language
        if before != language:
            locked.language = language
            locked.save(update_fields=["language"])
            audit_record(
                actor=by,
                action="staff.language_set",
                target=locked,
                before={"language": before},
                after={"language": language},
            )
    user.language = language
    return locked
