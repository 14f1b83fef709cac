"""
Keeping a mirror of an upstream record (end user, virtual account, recipient), one way for all.

- `mirror_create`: find or create our row by the submission's `request_key` (its creator's, bound
  to the request's fingerprint), commit it with a claim so one call per submission is in flight,
  call the upstream outside any transaction, drop the row when the upstream refused it for good, and
  record the answer, folding in a row that a webhook created before the answer arrived.
- `mirror_apply_event`: lock the record an event names (creating its mirror when unknown), apply
  an event once per `event_id`, write the timeline line and the audit entry; each kind brings
  its own small reading and applying functions.
- The pieces they share: permissions, timeline lines, refresh records and event-data errors.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext
from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticError

from gateway.client import call_sync
from gateway.errors import UpstreamError
from gateway.models import Environment
from gateway.schemas import Timestamp
from gateway.service_errors import service_error_from_upstream
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.services import audit_record
from users.live import mirror_changed
from users.models import TimelineEntryBase, TimelineKind, UpstreamMirror

_TIMESTAMP = TypeAdapter(Timestamp)


class EventDataError(ServiceError):
    """An event whose data cannot be applied (missing id, unknown status, bad time)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="event_data_invalid")


def require(user: StaffUser | None, permission: str) -> None:
    """Services check permissions themselves: views and the API are not the only callers."""
    if user is not None and not user.has_perm(permission):
        raise PermissionDenied(
            gettext("You do not have the permission %(permission)s.") % {"permission": permission}
        )


def snapshot_of(record: UpstreamMirror, fields: Mapping[str, str]) -> dict[str, Any]:
    """What the audit trail keeps as 'before' and 'after': each key read from the attribute it
    names (lists copied, so a later change of the record does not change the snapshot)."""
    values = {key: getattr(record, attribute) for key, attribute in fields.items()}
    return {key: list(v) if isinstance(v, list) else v for key, v in values.items()}


def parse_time(value: Any, *, field: str) -> datetime | None:
    """An upstream timestamp (None when absent), or EventDataError naming the field."""
    if value in (None, ""):
        return None
    try:
        return _TIMESTAMP.validate_python(value)
    except PydanticError:
        raise EventDataError(f"{field} is not a timestamp: {value!r}") from None


def timeline_add(
    record: UpstreamMirror,
    *,
    summary: str,
    kind: str = TimelineKind.STAFF,
    actor: StaffUser | None = None,
    event_type: str = "",
    event_id: str = "",
    applied: bool = True,
    data: dict[str, Any] | None = None,
) -> TimelineEntryBase:
    """One line on a mirrored record's timeline (end user, virtual account or recipient); open
    pages of the record hear of it once the transaction commits."""
    entry: TimelineEntryBase = record.timeline.create(
        kind=kind,
        actor=actor,
        summary=summary[:300],
        event_type=event_type,
        event_id=event_id,
        applied=applied,
        data=data or {},
    )
    mirror_changed(record)
    return entry


def refresh_after_commit(task: Callable[[int], None], record: UpstreamMirror) -> None:
    """Queue `task(record.pk)` (a background refresh) once the transaction commits."""
    from django_q.tasks import async_task

    pk = record.pk
    transaction.on_commit(lambda: async_task(task, pk))


def record_refresh[M: UpstreamMirror](
    kind: MirrorKind[M, Any],
    target: M,
    *,
    before: dict[str, Any],
    by: StaffUser | None,
    timeline_keeps_before: bool = False,
) -> None:
    """
    After a record was re-read from the upstream and saved (inside its transaction): when its
    snapshot moved from `before`, one timeline line naming the fields (a system line when `by`
    is None: a background task) and one audit entry `<audit>.refreshed` with before and after.
    `timeline_keeps_before` also keeps the changed fields' old values in the timeline line.
    """
    after = kind.snapshot(target)
    if before == after:
        return
    changed = sorted(k for k in after if before.get(k) != after.get(k))
    timeline_add(
        target,
        kind=TimelineKind.SYSTEM if by is None else TimelineKind.STAFF,
        actor=by,
        summary="Refreshed from the upstream: " + ", ".join(changed),
        data={"before": {k: before[k] for k in changed}} if timeline_keeps_before else None,
    )
    audit_record(
        actor=by,
        action=f"{kind.audit}.refreshed",
        target=target,
        details={"before": before, "after": after},
    )


@dataclass(frozen=True)
class MirrorKind[M: UpstreamMirror, R]:
    """
    What the shared steps need to know of one kind of mirrored record: its model, the audit name
    (`<audit>.created`, `<audit>.event.<type>`), its audit snapshot, and how an upstream answer
    (`R`) is taken in. `fold_early`, when the kind has webhooks, takes what a row created early
    by an event knew (before that row is deleted) and returns what to do after the answer is
    applied (or None).
    """

    model: type[M]
    audit: str
    snapshot_fields: Mapping[str, str]  # the audit snapshot: key -> attribute (see snapshot_of)
    upstream_id_of: Callable[[R], str]
    apply_answer: Callable[[M, R], None]
    fold_early: Callable[[M, M], Callable[[M], None] | None] | None = None
    # Kinds whose create takes no idempotency key: the upstream's records of the row's end user,
    # and whether one of them is the row's (for the adoption after no answer).
    listed: Callable[[M], list[R]] | None = None
    matches: Callable[[M, R], bool] | None = None

    def snapshot(self, row: M) -> dict[str, Any]:
        """What the audit trail keeps of `row` as 'before' and 'after'."""
        return snapshot_of(row, self.snapshot_fields)


# --- create ----------------------------------------------------------------------------------


class IdempotencyKeyReused(ServiceError):
    """The submission's key was sent before with another request: never the other's record."""

    status = 409
    names_fields_off_the_form = False  # a page shows the message as it is

    def __init__(self) -> None:
        super().__init__(
            gettext(
                "This Idempotency-Key (or form submission) was already used with a different "
                "request; send a new key for a new request."
            ),
            code="idempotency_key_reused",
            errors=[
                (
                    "Idempotency-Key",
                    gettext(
                        "This submission was already sent with other values; reload the form "
                        "(API: use a new Idempotency-Key)."
                    ),
                )
            ],
        )


class IdempotencyKeyInFlight(ServiceError):
    """The first request with this key is still with the upstream: ask again shortly."""

    status = 409
    names_fields_off_the_form = False  # a page shows the message as it is

    def __init__(self) -> None:
        super().__init__(
            gettext(
                "A request with this Idempotency-Key (or form submission) is still being "
                "processed; "
                "send it again in a moment to get its result."
            ),
            code="idempotency_key_in_flight",
            errors=[
                (
                    "Idempotency-Key",
                    gettext(
                        "This submission is still being processed; send it again in a moment to "
                        "see its result."
                    ),
                )
            ],
        )


def fingerprint_of(request: Mapping[str, Any]) -> str:
    """SHA-256 of a request's canonical JSON (validated values, keys sorted): what a key binds."""
    canonical = json.dumps(
        dict(request), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _claim_lapses() -> datetime:
    return timezone.now() + timedelta(seconds=settings.PAYOPS_SUBMISSION_CLAIM_SECONDS)


def mirror_create[M: UpstreamMirror, R](
    kind: MirrorKind[M, R],
    *,
    environment_id: int,
    request_key: uuid.UUID | None,
    request: Mapping[str, Any],
    defaults: dict[str, Any],
    by: StaffUser,
    send: Callable[[M], R],
    resume: Callable[[M], R | None] | None = None,
    refused_for_good: Collection[int],
    what: str,
    created_summary: Callable[[M], str],
    rename: Mapping[str, str] | None = None,
) -> M:
    """
    Create the record upstream once. Our row is committed first (with its keys, the
    fingerprint of `request`, the validated values, and a claim: this call is in flight), so a
    retry or a double submit by the same person with the same `request_key` finds it:

    - another request under the key: 409 `idempotency_key_reused` (never the first's record);
    - a synced row is returned as it is;
    - an unsynced one still claimed by a call in flight: 409 `idempotency_key_in_flight`, so
      only one call per submission ever reaches the upstream;
    - an unsynced one whose call ended without an answer is claimed again and `resume`d first
      (which may return the upstream's record found another way; by default
      `mirror_adopt_unknown`).

    Then `send` (outside any transaction): an answer whose status is in `refused_for_good`
    deletes the row (nothing half-created), no answer keeps it for the retry and ends the claim.
    """
    fingerprint = fingerprint_of(request)
    row, created = _submission_row(
        kind.model,
        environment_id=environment_id,
        by=by,
        request_key=request_key,
        defaults={**defaults, "request_fingerprint": fingerprint, "claimed_until": _claim_lapses()},
    )
    if not created:
        if row.request_fingerprint and row.request_fingerprint != fingerprint:
            raise IdempotencyKeyReused()
        if row.is_synced:
            return row  # a double submit: the first one already did it
        current = _claim_again(kind.model, row)
        if current is not None:
            return current  # the first call's answer was stored meanwhile
    try:
        if not created:
            found = (resume or partial(mirror_adopt_unknown, kind))(row)
            if found is not None:
                return mirror_store_created(kind, row, found, by=by, summary=created_summary)
        try:
            answer = send(row)
        except UpstreamError as exc:
            error = service_error_from_upstream(exc, rename=rename, what=what)
            if error.status in refused_for_good:
                row.delete()
            raise error from exc
        return mirror_store_created(kind, row, answer, by=by, summary=created_summary)
    finally:
        # No answer (or a failure of ours): the next retry may claim it. A stored or deleted
        # row is not touched (it is synced, or gone).
        kind.model._default_manager.filter(pk=row.pk, upstream_id="").update(claimed_until=None)


def _claim_again[M: UpstreamMirror](model: type[M], row: M) -> M | None:
    """
    Claim an unsynced submission row whose call ended without an answer (or whose claim lapsed:
    a process died): one conditional UPDATE, so of concurrent retries exactly one wins (None:
    this call holds the claim now). The others get the row when its answer was stored
    meanwhile, else 409 in flight.
    """
    now = timezone.now()
    claimed = (
        model._default_manager.filter(pk=row.pk, upstream_id="")
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .update(claimed_until=_claim_lapses())
    )
    if claimed:
        return None
    current = model._default_manager.filter(pk=row.pk).first()
    if current is not None and current.is_synced:
        return current
    raise IdempotencyKeyInFlight()


def _submission_row[M: UpstreamMirror](
    model: type[M],
    *,
    environment_id: int,
    by: StaffUser,
    request_key: uuid.UUID | None,
    defaults: dict[str, Any],
) -> tuple[M, bool]:
    """Our row of one submission of `by` (committed now), and whether this call created it."""
    key = {
        "environment_id": environment_id,
        "created_by": by,
        "request_key": request_key or uuid.uuid4(),
    }
    try:
        with transaction.atomic():
            return model._default_manager.get_or_create(**key, defaults=defaults)
    except IntegrityError:  # the same submission, created between our read and write
        return model._default_manager.get(**key), False


def mirror_store_created[M: UpstreamMirror, R](
    kind: MirrorKind[M, R], row: M, answer: R, *, by: StaffUser, summary: Callable[[M], str]
) -> M:
    """Record the upstream's answer to our create on our row, once, with timeline and audit."""
    with transaction.atomic():
        row = kind.model._default_manager.select_for_update().get(pk=row.pk)
        if row.is_synced:
            return row
        upstream_id = kind.upstream_id_of(answer)
        after_answer = _fold_early_row(kind, row, upstream_id)
        row.upstream_id = upstream_id
        row.claimed_until = None
        kind.apply_answer(row, answer)
        if after_answer is not None:
            after_answer(row)
        row.save()
        timeline_add(row, summary=summary(row), actor=by)
        audit_record(
            actor=by,
            action=f"{kind.audit}.created",
            target=row,
            details={"before": None, "after": kind.snapshot(row)},
        )
    return row


def _fold_early_row[M: UpstreamMirror, R](
    kind: MirrorKind[M, R], row: M, upstream_id: str
) -> Callable[[M], None] | None:
    """A webhook may have mirrored the record before the create call returned: fold it in."""
    if kind.fold_early is None:
        return None
    early = (
        kind.model._default_manager.select_for_update()
        .filter(environment_id=row.environment_id, upstream_id=upstream_id)
        .exclude(pk=row.pk)
        .first()
    )
    if early is None:
        return None
    early.timeline.update(**{early.timeline.field.name: row})
    after_answer = kind.fold_early(row, early)
    early.delete()
    return after_answer


def mirror_adopt_unknown[M: UpstreamMirror, R](kind: MirrorKind[M, R], row: M) -> R | None:
    """
    After no answer: the one record the upstream lists for the row (`kind.listed`) that no row
    of ours holds yet and that `kind.matches` it: the upstream made it anyway. None when the
    kind lists nothing, the list fails or is unclear.
    """
    if kind.listed is None or kind.matches is None:
        return None
    try:
        records = kind.listed(row)
    except UpstreamError:
        return None
    known = set(
        kind.model._default_manager.filter(environment_id=row.environment_id)
        .exclude(upstream_id="")
        .values_list("upstream_id", flat=True)
    )
    unknown = [r for r in records if kind.upstream_id_of(r) not in known and kind.matches(row, r)]
    return unknown[0] if len(unknown) == 1 else None


def upstream_answer(call: Callable[..., Any], *args: Any, what: str, **kwargs: Any) -> Any:
    """A read or change of a synced record, its failure as a ServiceError about `what`."""
    try:
        return call_sync(call, *args, **kwargs)
    except UpstreamError as exc:
        raise service_error_from_upstream(exc, what=what) from exc


# --- events ----------------------------------------------------------------------------------


@dataclass
class EventOutcome:
    """What applying an event did: whether it changed the record, the timeline's words, and
    what to do once the line is written (a refresh to queue)."""

    applied: bool
    summary: str
    then: Callable[[], None] | None = None


def mirror_apply_event[M: UpstreamMirror](
    kind: MirrorKind[M, Any],
    *,
    environment: Environment,
    upstream_id: str,
    event_type: str,
    data: dict[str, Any],
    new_row: Callable[[], M],
    apply: Callable[[M, bool], EventOutcome],
) -> M:
    """
    Apply one event to the record it names, in one transaction: the row locked (or `new_row`
    saved, when unknown; a concurrent first event may save it too), an `event_id` applied once
    per record, `apply(row, is_new)`, then one timeline line and, when it changed the record,
    one audit entry.
    """
    event_id = str(data.get("event_id") or "")
    with transaction.atomic():
        row, is_new = _event_row(kind.model, environment, upstream_id, new_row)
        if not is_new and event_id and row.timeline.filter(event_id=event_id).exists():
            return row  # delivered twice: applied the first time
        before = kind.snapshot(row)
        outcome = apply(row, is_new)
        row.save()
        timeline_add(
            row,
            kind=TimelineKind.EVENT,
            event_type=event_type,
            event_id=event_id,
            applied=outcome.applied,
            summary=outcome.summary,
            data=data,
        )
        if outcome.applied:
            audit_record(
                actor=None,
                action=f"{kind.audit}.event.{event_type}",
                target=row,
                details={"before": before, "after": kind.snapshot(row), "event_id": event_id},
            )
        if outcome.then is not None:
            outcome.then()
    return row


def _event_row[M: UpstreamMirror](
    model: type[M], environment: Environment, upstream_id: str, new_row: Callable[[], M]
) -> tuple[M, bool]:
    """The locked row of `upstream_id`, or a new one; and whether this event created it."""
    row = (
        model._default_manager.select_for_update()
        .filter(environment=environment, upstream_id=upstream_id)
        .first()
    )
    if row is not None:
        return row, False
    row = new_row()
    try:
        with transaction.atomic():  # a concurrent first event may create it too
            row.save()
    except IntegrityError:
        return model._default_manager.select_for_update().get(
            environment=environment, upstream_id=upstream_id
        ), False
    return row, True


def event_record_id(data: Any, *, id_field: str, event_type: str) -> str:
    """The record id an event's data names; EventDataError when data or id is missing."""
    if not isinstance(data, dict):
        raise EventDataError("event data must be an object")
    upstream_id = str(data.get(id_field) or "").strip()
    if not upstream_id:
        raise EventDataError(f"{event_type} without {id_field}")
    return upstream_id
