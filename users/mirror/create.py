"""Creating a mirrored record upstream exactly once per submission (`mirror_create`), and storing
the upstream's answer, folding in a row an event created first."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext

from gateway.client import call_sync
from gateway.errors import UpstreamError
from gateway.service_errors import service_error_from_upstream
from staff.actions import record_action
from staff.errors import ServiceError
from staff.models import StaffUser
from users.mirror.records import MirrorKind, timeline_add
from users.models import UpstreamMirror


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
    if not created and (done := _earlier_submission(kind.model, row, fingerprint)) is not None:
        return done
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


def _earlier_submission[M: UpstreamMirror](model: type[M], row: M, fingerprint: str) -> M | None:
    """A submission already under the key: refused when it asked for something else; the record
    when it is done (a double submit, or the first call's answer stored meanwhile); None when
    this call has claimed it again."""
    if row.request_fingerprint and row.request_fingerprint != fingerprint:
        raise IdempotencyKeyReused()
    if row.is_synced:
        return row
    return _claim_again(model, row)


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
        record_action(
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
