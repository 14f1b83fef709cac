"""End-user writes: create/update through the gateway, refresh, apply events, KYC reviews."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone
from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticError

from gateway import idempotency
from gateway.client import call_sync, upstream
from gateway.errors import UpstreamError
from gateway.models import Environment
from gateway.schemas import Timestamp
from gateway.schemas import User as UpstreamUser
from gateway.service_errors import service_error_from_upstream
from staff import roles
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.services import audit_record
from users.live import mirror_changed
from users.models import (
    EndUser,
    EndUserStatus,
    EndUserTimelineEntry,
    EndUserType,
    KycReview,
    KycReviewKind,
    TimelineEntryBase,
    TimelineKind,
    UpstreamMirror,
    VerificationStatus,
)
from users.ordering import UserEvent, UserKnown, decide_user_event
from users.validation import (
    normalise_country,
    normalise_email,
    normalise_name,
    normalise_phone,
)

logger = logging.getLogger(__name__)

CREATE_SCOPE = "user_create"
# Changing one of these restarts verification upstream (decisions.md 3 "User").
IDENTITY_FIELDS = ("first_name", "last_name", "country")
EDITABLE_FIELDS = ("email", "phone_number", "first_name", "last_name", "country")
# The upstream names the phone `phone_number` in requests and `phone` in records and events.
_TIMESTAMP = TypeAdapter(Timestamp)


class EventDataError(ValueError):
    """An event whose data cannot be applied (missing id, unknown status, bad time)."""


def require(user: StaffUser | None, permission: str) -> None:
    """Services check permissions themselves: views and the API are not the only callers."""
    if user is not None and not user.has_perm(permission):
        raise PermissionDenied(f"You do not have the permission {permission}.")


def snapshot(end_user: EndUser) -> dict[str, Any]:
    """What the audit trail keeps as 'before' and 'after'."""
    return {
        "upstream_id": end_user.upstream_id,
        "type": end_user.type,
        "email": end_user.email,
        "phone_number": end_user.phone_number,
        "first_name": end_user.first_name,
        "last_name": end_user.last_name,
        "country": end_user.country,
        "status": end_user.status,
        "verification_status": end_user.verification_status,
        "reasons": list(end_user.reasons),
    }


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


def _parse_time(value: Any, *, field: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return _TIMESTAMP.validate_python(value)
    except PydanticError:
        raise EventDataError(f"{field} is not a timestamp: {value!r}") from None


def _enum(value: Any, choices: type[Any], *, field: str) -> str:
    text = str(value or "").strip().lower()
    if text not in choices.values:
        raise EventDataError(f"{field} {value!r} is not one of {', '.join(choices.values)}")
    return text


def validate_fields(values: dict[str, Any], *, partial: bool = False) -> dict[str, str]:
    """Checked, normalised end-user fields, or a ServiceError naming each bad field."""
    problems: list[tuple[str, str]] = []
    clean: dict[str, str] = {}
    checks = {
        "email": normalise_email,
        "first_name": lambda v: normalise_name(v, label="first name"),
        "last_name": lambda v: normalise_name(v, label="last name"),
        "country": normalise_country,
    }
    for name, check in checks.items():
        if name in values or not partial:
            try:
                clean[name] = check(values.get(name) or "")
            except ValueError as exc:
                problems.append((name, str(exc)))
    if "phone_number" in values or not partial:
        try:
            clean["phone_number"] = normalise_phone(
                values.get("phone_number") or "", country=clean.get("country", "")
            )
        except ValueError as exc:
            problems.append(("phone_number", str(exc)))
    if "type" in values or not partial:
        kind = str(values.get("type") or "").strip().lower()
        if kind not in EndUserType.values:
            problems.append(("type", "Choose individual or business."))
        clean["type"] = kind
    if problems:
        raise ServiceError("Some fields need correcting.", errors=problems)
    return clean


# --- create ----------------------------------------------------------------------------------


def end_user_create(
    *,
    environment: Environment,
    by: StaffUser,
    type: str,
    email: str,
    phone_number: str,
    first_name: str,
    last_name: str,
    country: str,
    request_key: uuid.UUID | None = None,
) -> EndUser:
    """
    Create the user upstream, once. The row and its idempotency key are committed before the
    call, so a retry (or a double submit carrying the same `request_key`) sends the same key and
    the upstream answers with the same user. A refusal removes the row (nothing half-created);
    no answer keeps it pending, to be submitted again.
    """
    require(by, roles.END_USERS_MANAGE)
    clean = validate_fields(
        {
            "type": type,
            "email": email,
            "phone_number": phone_number,
            "first_name": first_name,
            "last_name": last_name,
            "country": country,
        }
    )
    request_key = request_key or uuid.uuid4()
    try:
        with transaction.atomic():
            end_user, created = EndUser.objects.get_or_create(
                environment=environment,
                request_key=request_key,
                defaults={**clean, "created_by": by},
            )
    except IntegrityError:
        end_user, created = (
            EndUser.objects.get(environment=environment, request_key=request_key),
            False,
        )
    if not created:
        if end_user.is_synced:
            return end_user  # a double submit: the first one already did it
        if any(getattr(end_user, name) != value for name, value in clean.items()):
            raise ServiceError(
                "This submission was already sent with other values; reload the form.",
                code="idempotency_key_reused",
                status=409,
            )
    key = idempotency.key_for(scope=CREATE_SCOPE, obj=end_user)
    try:
        record = call_sync(
            upstream(environment).users.create,
            idempotency_key=key,
            **clean,
        )
    except UpstreamError as exc:
        error = service_error_from_upstream(exc, what="the new end user")
        if error.status == 400:
            idempotency.forget(scope=CREATE_SCOPE, obj=end_user)
            end_user.delete()
        raise error from exc
    return _store_created(end_user, record, by=by)


def _store_created(end_user: EndUser, record: UpstreamUser, *, by: StaffUser) -> EndUser:
    with transaction.atomic():
        end_user = EndUser.objects.select_for_update().get(pk=end_user.pk)
        if end_user.is_synced:
            return end_user
        # A webhook may have mirrored this user before the create call returned: fold it in.
        early = (
            EndUser.objects.select_for_update()
            .filter(environment_id=end_user.environment_id, upstream_id=record.user_id)
            .exclude(pk=end_user.pk)
            .first()
        )
        if early is not None:
            EndUserTimelineEntry.objects.filter(end_user=early).update(end_user=end_user)
            for name in ("upstream_updated_at", "verification_id", "verified_at", "kyc_type"):
                setattr(end_user, name, getattr(early, name))
            early.delete()
        end_user.upstream_id = record.user_id
        _apply_record(end_user, record.model_dump(mode="json"))
        end_user.save()
        timeline_add(end_user, summary=f"Created by {by.email}", actor=by)
        audit_record(
            actor=by,
            action="end_user.created",
            target=end_user,
            details={"before": None, "after": snapshot(end_user)},
        )
    return end_user


def _apply_record(end_user: EndUser, data: dict[str, Any]) -> None:
    """Set the fields of a full upstream record (a create/update/get answer): it is current."""
    mapping = {"phone": "phone_number", "phone_number": "phone_number"}
    for name in ("type", "email", "first_name", "last_name", "country", "phone", "phone_number"):
        if data.get(name):
            setattr(end_user, mapping.get(name, name), str(data[name]))
    if data.get("status") in EndUserStatus.values:
        end_user.status = data["status"]
    if data.get("verification_status") in VerificationStatus.values:
        end_user.verification_status = data["verification_status"]
        if end_user.verification_status != VerificationStatus.REJECTED:
            end_user.reasons = []
        if end_user.verification_status == VerificationStatus.VERIFIED and not end_user.verified_at:
            end_user.verified_at = timezone.now()
    for name in ("verification_mode", "kyc_type"):
        if data.get(name):
            setattr(end_user, name, str(data[name]))
    if isinstance(data.get("reasons"), list):
        end_user.reasons = [str(r) for r in data["reasons"]]
    if "requires_reverification" in data and data["requires_reverification"] is not None:
        end_user.requires_reverification = bool(data["requires_reverification"])
    created = _parse_time(data.get("created_at"), field="created_at")
    updated = _parse_time(data.get("updated_at"), field="updated_at")
    if created:
        end_user.upstream_created_at = created
    if updated and (
        end_user.upstream_updated_at is None or updated >= end_user.upstream_updated_at
    ):
        end_user.upstream_updated_at = updated
    end_user.upstream_payload = data
    end_user.refreshed_at = timezone.now()


# --- update ----------------------------------------------------------------------------------


def end_user_changes(end_user: EndUser, values: dict[str, Any]) -> dict[str, str]:
    """The checked fields whose value differs from the record (only these are sent)."""
    submitted = {k: v for k, v in values.items() if k in EDITABLE_FIELDS and v is not None}
    if "type" in values and values["type"] not in (None, end_user.type):
        raise ServiceError(
            "The type of an end user cannot change.", errors=[("type", "cannot be changed")]
        )
    if "phone_number" in submitted and "country" not in submitted:
        submitted["country"] = end_user.country  # to read a national number, not to send it
        clean = validate_fields(submitted, partial=True)
        clean.pop("country")
    else:
        clean = validate_fields(submitted, partial=True)
    return {k: v for k, v in clean.items() if getattr(end_user, k) != v}


def identity_changes(changes: dict[str, str]) -> list[str]:
    return [name for name in IDENTITY_FIELDS if name in changes]


def end_user_update(
    *,
    end_user: EndUser,
    by: StaffUser,
    values: dict[str, Any],
    confirm_reverification: bool = False,
) -> EndUser:
    """Send only the changed fields; a change of identity needs `confirm_reverification`."""
    require(by, roles.END_USERS_MANAGE)
    if not end_user.is_synced:
        raise ServiceError("This end user is not created upstream yet.", code="not_synced")
    changes = end_user_changes(end_user, values)
    if not changes:
        raise ServiceError("Nothing changed.", code="no_changes")
    identity = identity_changes(changes)
    if identity and not confirm_reverification:
        raise ServiceError(
            "Changing "
            + ", ".join(name.replace("_", " ") for name in identity)
            + " restarts identity verification: the user cannot receive a new virtual account "
            "until verified again. Confirm to go ahead.",
            code="reverification_required",
            status=409,
            errors=[(name, "changing this restarts verification") for name in identity],
        )
    before = snapshot(end_user)
    try:
        record = call_sync(
            upstream(end_user.environment).users.update, end_user.upstream_id, **changes
        )
    except UpstreamError as exc:
        raise service_error_from_upstream(exc, what="the change") from exc
    with transaction.atomic():
        end_user = EndUser.objects.select_for_update().get(pk=end_user.pk)
        _apply_record(end_user, record.model_dump(mode="json"))
        # The answer may omit fields it did not change: ours are the ones we just sent.
        for name, value in changes.items():
            setattr(end_user, name, value)
        end_user.save()
        timeline_add(
            end_user,
            summary=f"Updated by {by.email}: "
            + ", ".join(sorted(changes))
            + (" (verification restarts)" if identity else ""),
            actor=by,
            data={"changed": changes},
        )
        audit_record(
            actor=by,
            action="end_user.updated",
            target=end_user,
            details={"before": before, "after": snapshot(end_user), "sent": changes},
        )
    return end_user


# --- refresh ---------------------------------------------------------------------------------


def record_refresh(
    target: UpstreamMirror,
    *,
    before: dict[str, Any],
    after: dict[str, Any],
    by: StaffUser | None,
    action: str,
    timeline_keeps_before: bool = False,
) -> None:
    """
    After a record was re-read from the upstream (inside its transaction): when anything changed,
    one timeline line naming the fields (a system line when `by` is None: a background task) and
    one audit entry with before and after. `timeline_keeps_before` also keeps the changed fields'
    old values in the timeline line.
    """
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
    audit_record(actor=by, action=action, target=target, details={"before": before, "after": after})


def end_user_refresh(*, end_user: EndUser, by: StaffUser | None) -> EndUser:
    """Read the record from the upstream and take it as current (by None: a background task)."""
    require(by, roles.DIRECTORY_VIEW)
    if not end_user.is_synced:
        raise ServiceError("This end user is not created upstream yet.", code="not_synced")
    try:
        record = call_sync(
            upstream(end_user.environment, background=by is None).users.get, end_user.upstream_id
        )
    except UpstreamError as exc:
        raise service_error_from_upstream(exc, what="the refresh") from exc
    with transaction.atomic():
        end_user = EndUser.objects.select_for_update().get(pk=end_user.pk)
        before = snapshot(end_user)
        _apply_record(end_user, record.model_dump(mode="json"))
        end_user.save()
        record_refresh(
            end_user,
            before=before,
            after=snapshot(end_user),
            by=by,
            action="end_user.refreshed",
            timeline_keeps_before=True,
        )
    return end_user


def _queue_refresh(end_user: EndUser) -> None:
    from django_q.tasks import async_task

    from users.tasks import end_user_refresh_task

    pk = end_user.pk
    transaction.on_commit(lambda: async_task(end_user_refresh_task, pk))


# --- events ----------------------------------------------------------------------------------


def end_user_apply_event(
    *, environment: Environment, event_type: str, data: dict[str, Any]
) -> EndUser | None:
    """
    Apply one upstream user event (user.created, user.updated, user.verification.accepted,
    user.verification.failed): idempotent (an event_id is applied once per user), tolerant of
    order (users.ordering decides), creating the mirror of an unknown user. Returns the user.
    Raises EventDataError for data it cannot read.
    """
    try:
        event = UserEvent(event_type)
    except ValueError:
        raise EventDataError(f"not a user event: {event_type!r}") from None
    if not isinstance(data, dict):
        raise EventDataError("event data must be an object")
    user_id = str(data.get("user_id") or "").strip()
    if not user_id:
        raise EventDataError(f"{event_type} without user_id")
    event_id = str(data.get("event_id") or "")
    event_at = _parse_time(
        data.get("updated_at") if event is UserEvent.UPDATED else data.get("created_at"),
        field="updated_at" if event is UserEvent.UPDATED else "created_at",
    )
    if event is UserEvent.UPDATED and event_at is None:
        raise EventDataError("user.updated without updated_at")
    incoming_status = (
        _enum(data.get("status"), EndUserStatus, field="status")
        if data.get("status") is not None
        else ""
    )
    incoming_verification = (
        _enum(data.get("verification_status"), VerificationStatus, field="verification_status")
        if data.get("verification_status") is not None
        else ""
    )
    if event is UserEvent.VERIFICATION_ACCEPTED:
        incoming_verification, incoming_status = "verified", "verified"
    elif event is UserEvent.VERIFICATION_FAILED:
        incoming_verification, incoming_status = "rejected", "unverified"
        if not isinstance(data.get("reasons", []), list):
            raise EventDataError("reasons must be a list")

    with transaction.atomic():
        end_user = (
            EndUser.objects.select_for_update()
            .filter(environment=environment, upstream_id=user_id)
            .first()
        )
        is_new = end_user is None
        if end_user is None:
            try:
                with transaction.atomic():  # a concurrent first event may create it too
                    end_user = EndUser.objects.create(
                        environment=environment,
                        upstream_id=user_id,
                        email=str(data.get("email") or ""),
                    )
            except IntegrityError:
                is_new = False
                end_user = EndUser.objects.select_for_update().get(
                    environment=environment, upstream_id=user_id
                )
        if not is_new and event_id and end_user.timeline.filter(event_id=event_id).exists():
            return end_user  # delivered twice: applied the first time
        known = UserKnown(
            upstream_updated_at=None if is_new else end_user.upstream_updated_at,
            verification_status="" if is_new else end_user.verification_status,
            verification_id="" if is_new else end_user.verification_id,
            is_new=is_new,
        )
        verdict = decide_user_event(
            known,
            event=event,
            event_at=event_at,
            verification_id=str(data.get("id") or ""),
            restarts_verification=bool(data.get("requires_reverification"))
            and bool(data.get("verification_triggered")),
        )
        before = snapshot(end_user)
        if verdict.fields:
            if data.get("type") in EndUserType.values:
                end_user.type = data["type"]
            if data.get("email"):
                end_user.email = str(data["email"])
            if data.get("phone"):
                end_user.phone_number = str(data["phone"])
            if isinstance(data.get("updated_fields"), dict):
                for name, value in data["updated_fields"].items():
                    field = "phone_number" if name == "phone" else name
                    if field in EDITABLE_FIELDS and isinstance(value, str):
                        setattr(end_user, field, value)
            if data.get("verification_mode"):
                end_user.verification_mode = str(data["verification_mode"])
            if event_at is not None:
                if event is UserEvent.CREATED:
                    end_user.upstream_created_at = event_at
                end_user.upstream_updated_at = event_at
            if event is UserEvent.UPDATED and "requires_reverification" in data:
                end_user.requires_reverification = bool(data["requires_reverification"])
        if verdict.verification:
            if incoming_status:
                end_user.status = incoming_status
            if incoming_verification:
                end_user.verification_status = incoming_verification
            if event in (UserEvent.VERIFICATION_ACCEPTED, UserEvent.VERIFICATION_FAILED):
                end_user.verification_id = str(data.get("id") or "")
                end_user.requires_reverification = False
            if event is UserEvent.VERIFICATION_ACCEPTED:
                end_user.reasons = []
                end_user.verified_at = timezone.now()
                if data.get("kyc_type"):
                    end_user.kyc_type = str(data["kyc_type"])
            elif event is UserEvent.VERIFICATION_FAILED:
                end_user.reasons = [str(r) for r in data.get("reasons") or []]
            else:
                end_user.reasons = [] if incoming_verification != "rejected" else end_user.reasons
        changed = verdict.fields or verdict.verification
        if changed:
            end_user.upstream_payload = {**end_user.upstream_payload, **data}
        end_user.save()
        timeline_add(
            end_user,
            kind=TimelineKind.EVENT,
            event_type=event_type,
            event_id=event_id,
            applied=changed,
            summary=_event_summary(event, data) + ("" if changed else f" (ignored: {verdict.why})"),
            data=data,
        )
        if changed:
            audit_record(
                actor=None,
                action=f"end_user.event.{event_type}",
                target=end_user,
                details={"before": before, "after": snapshot(end_user), "event_id": event_id},
            )
        if verdict.refresh or (is_new and not end_user.first_name):
            _queue_refresh(end_user)
    return end_user


def _event_summary(event: UserEvent, data: dict[str, Any]) -> str:
    from users.validation import reason_in_words

    if event is UserEvent.CREATED:
        return "Created upstream"
    if event is UserEvent.UPDATED:
        fields = ", ".join(sorted((data.get("updated_fields") or {}).keys())) or "no fields"
        restart = " — verification restarts" if data.get("verification_triggered") else ""
        return f"Updated upstream ({fields}){restart}"
    if event is UserEvent.VERIFICATION_ACCEPTED:
        return "Verification accepted"
    reasons = " ".join(reason_in_words(str(r)) for r in data.get("reasons") or [])
    return f"Verification rejected: {reasons or 'no reason given'}"


# --- KYC review ------------------------------------------------------------------------------


def kyc_note_add(*, end_user: EndUser, by: StaffUser, text: str) -> KycReview:
    return _kyc_review(end_user=end_user, by=by, text=text, kind=KycReviewKind.NOTE)


def kyc_mark_reviewed(*, end_user: EndUser, by: StaffUser, reason: str) -> KycReview:
    return _kyc_review(end_user=end_user, by=by, text=reason, kind=KycReviewKind.REVIEWED)


def _kyc_review(*, end_user: EndUser, by: StaffUser, text: str, kind: str) -> KycReview:
    require(by, roles.KYC_REVIEW)
    text = (text or "").strip()
    if not text:
        field = "reason" if kind == KycReviewKind.REVIEWED else "text"
        raise ServiceError("Say why, in a few words.", errors=[(field, "This field is required.")])
    with transaction.atomic():
        end_user = EndUser.objects.select_for_update().get(pk=end_user.pk)
        before = {"reviewed_at": end_user.reviewed_at, "reviewed_by": end_user.reviewed_by_id}
        review = KycReview.objects.create(
            end_user=end_user,
            kind=kind,
            by=by,
            text=text,
            verification_status=end_user.verification_status,
        )
        if kind == KycReviewKind.REVIEWED:
            end_user.reviewed_at = review.at
            end_user.reviewed_by = by
            end_user.save(update_fields=["reviewed_at", "reviewed_by", "updated_at"])
        timeline_add(
            end_user,
            actor=by,
            summary=("Marked reviewed" if kind == KycReviewKind.REVIEWED else "Compliance note")
            + f" by {by.email}: {text}",
        )
        audit_record(
            actor=by,
            action=f"end_user.kyc_{kind}",
            target=end_user,
            details={
                "before": before,
                "after": {
                    "reviewed_at": end_user.reviewed_at,
                    "reviewed_by": end_user.reviewed_by_id,
                },
                "text": text,
                "verification_status": end_user.verification_status,
            },
        )
    return review
