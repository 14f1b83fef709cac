"""The one way to act on a record: lock it, record it before and after, audit, announce on commit.

Every app's services write through `act` (Zulip's `do_*` discipline): no caller can change a
record and forget its audit entry or the live message the record's open pages wait for.

    with act(actor=by, action="quote.repriced", target=quote, fields=["requested_amount"]) as a:
        a.target.requested_amount = amount          # a.target is the locked row
        a.target.save(update_fields=["requested_amount"])
        a.details["quote_id"] = a.target.upstream_id

- `target` is locked (SELECT ... FOR UPDATE) and re-read, unless `lock=False` (the caller holds
  the lock already, or the row was created in this transaction). A creation passes no target
  and sets `a.target` to the new row inside the block; its `before` is {}.
- `fields` names what the action may change: they are read before and after the block and the
  audit page shows them as a diff. Leave them out when the action changes no field.
- The live message: each app registers, for its models, the function that tells open pages a
  record changed (`register_announcer`, from its AppConfig.ready()). An action on a model with no
  announcer must say so (`announce=False`), so forgetting is a failure, not a silence.

Staff is the lowest app, so every app may import this; console (the live layer) plugs in from above
through the announcer registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import models, transaction

from staff.audit import audit_record
from staff.models import AuditEntry, StaffUser

Announcer = Callable[[Any], None]
_ANNOUNCERS: dict[type[models.Model], Announcer] = {}


def register_announcer(model: type[models.Model], announcer: Announcer) -> None:
    """`announcer(record)` queues the live message for a changed `model` row (on commit)."""
    existing = _ANNOUNCERS.get(model)
    if existing is not None and existing is not announcer:
        raise ValueError(f"{model._meta.label} already has an announcer: {existing!r}")
    _ANNOUNCERS[model] = announcer


def announcer_for(model: type[models.Model]) -> Announcer | None:
    """The announcer registered for `model` or the nearest class it inherits from (an abstract
    model's announcer serves every model built on it)."""
    for klass in model.__mro__:
        if klass in _ANNOUNCERS:
            return _ANNOUNCERS[klass]
    return None


class NoAnnouncer(LookupError):
    """An action on a record whose app registered no live message and did not say announce=False."""


@dataclass
class Act:
    """One action in progress: the locked record, and what its audit entry will say."""

    actor: StaffUser | None
    action: str
    target: Any
    fields: Sequence[str]
    details: dict[str, Any]
    before: dict[str, Any] | None
    announce: bool
    entry: AuditEntry | None = field(default=None)
    changed: bool = True

    def nothing_changed(self) -> None:
        """The action found nothing to change: no audit entry, no live message."""
        self.changed = False


def _snapshot(record: Any, fields: Sequence[str]) -> dict[str, Any]:
    return {name: getattr(record, name) for name in fields}


def _locked(target: models.Model) -> models.Model:
    manager = target._meta.model._default_manager  # _meta: request.user is a lazy wrapper
    return manager.select_for_update(of=("self",)).get(pk=target.pk)


def announce_change(record: Any) -> None:
    """Queue `record`'s live message (on commit) for a change that writes no audit entry of its
    own: a state the upstream reported, which its event or poll record already explains."""
    model = record._meta.model  # not type(record): request.user is a lazy wrapper
    announcer = announcer_for(model)
    if announcer is None:
        raise NoAnnouncer(
            f"{model._meta.label} has no live message (register_announcer), "
            "and the action did not say announce=False"
        )
    announcer(record)


@contextmanager
def act(
    *,
    actor: StaffUser | None,
    action: str,
    target: models.Model | None = None,
    fields: Sequence[str] = (),
    details: dict[str, Any] | None = None,
    lock: bool = True,
    announce: bool = True,
) -> Iterator[Act]:
    """Do `action` on `target` in one transaction: lock, snapshot, (the caller's change), audit,
    live message on commit. See the module's docstring."""
    with transaction.atomic():
        if target is not None and lock:
            target = _locked(target)
        before = None
        if fields:
            before = _snapshot(target, fields) if target is not None else {}
        current = Act(
            actor=actor,
            action=action,
            target=target,
            fields=tuple(fields),
            details=dict(details or {}),
            before=before,
            announce=announce,
        )
        yield current
        if not current.changed:
            return
        record = current.target
        after = _snapshot(record, current.fields) if current.fields and record else None
        current.entry = audit_record(
            actor=current.actor,
            action=current.action,
            target=record,
            details=current.details,
            before=current.before,
            after=after,
        )
        if current.announce and record is not None:
            announce_change(record)


def record_action(
    *,
    actor: StaffUser | None,
    action: str,
    target: models.Model | None = None,
    details: dict[str, Any] | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    announce: bool = True,
) -> AuditEntry:
    """An action whose change the caller already made under its own lock (or one that changes no
    record: a sign-in, an export): its audit entry, and its live message on commit."""
    with transaction.atomic():
        entry = audit_record(
            actor=actor, action=action, target=target, details=details, before=before, after=after
        )
        if announce and target is not None:
            announce_change(target)
    return entry
