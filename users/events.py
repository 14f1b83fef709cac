"""End-user events (user.created, user.updated, user.verification.*) applied to the mirror."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from gateway.models import Environment
from users.mirror import (
    EventDataError,
    EventOutcome,
    event_record_id,
    mirror_apply_event,
    parse_time,
)
from users.models import EndUser, EndUserStatus, EndUserType, VerificationStatus
from users.ordering import UserEvent, UserKnown, UserVerdict, decide_user_event
from users.services import EDITABLE_FIELDS, END_USER, queue_refresh
from users.validation import reason_in_words


@dataclass(frozen=True)
class UserEventRead:
    """An event's data, checked: what it is, when it happened and the states it carries."""

    event: UserEvent
    event_at: datetime | None
    status: str
    verification: str


def _enum(value: Any, choices: type[Any], *, field: str) -> str:
    text = str(value or "").strip().lower()
    if text not in choices.values:
        raise EventDataError(f"{field} {value!r} is not one of {', '.join(choices.values)}")
    return text


def _read(event_type: str, data: dict[str, Any]) -> UserEventRead:
    """The event checked before anything is locked (EventDataError when unreadable)."""
    event = UserEvent(event_type)
    updated = event is UserEvent.UPDATED
    event_at = parse_time(
        data.get("updated_at") if updated else data.get("created_at"),
        field="updated_at" if updated else "created_at",
    )
    if updated and event_at is None:
        raise EventDataError("user.updated without updated_at")
    status = (
        _enum(data.get("status"), EndUserStatus, field="status")
        if data.get("status") is not None
        else ""
    )
    verification = (
        _enum(data.get("verification_status"), VerificationStatus, field="verification_status")
        if data.get("verification_status") is not None
        else ""
    )
    if event is UserEvent.VERIFICATION_ACCEPTED:
        verification, status = "verified", "verified"
    elif event is UserEvent.VERIFICATION_FAILED:
        verification, status = "rejected", "unverified"
        if not isinstance(data.get("reasons", []), list):
            raise EventDataError("reasons must be a list")
    return UserEventRead(event, event_at, status, verification)


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
        UserEvent(event_type)
    except ValueError:
        raise EventDataError(f"not a user event: {event_type!r}") from None
    user_id = event_record_id(data, id_field="user_id", event_type=event_type)
    read = _read(event_type, data)

    def apply(end_user: EndUser, is_new: bool) -> EventOutcome:
        return _apply(end_user, is_new=is_new, read=read, data=data)

    return mirror_apply_event(
        END_USER,
        environment=environment,
        upstream_id=user_id,
        event_type=event_type,
        data=data,
        new_row=lambda: EndUser(
            environment=environment, upstream_id=user_id, email=str(data.get("email") or "")
        ),
        apply=apply,
    )


def _apply(
    end_user: EndUser, *, is_new: bool, read: UserEventRead, data: dict[str, Any]
) -> EventOutcome:
    """What users.ordering lets the event change, changed."""
    verdict = _verdict(end_user, is_new=is_new, read=read, data=data)
    if verdict.fields:
        _apply_fields(end_user, read=read, data=data)
    if verdict.verification:
        _apply_verification(end_user, read=read, data=data)
    changed = verdict.fields or verdict.verification
    if changed:
        end_user.upstream_payload = {**end_user.upstream_payload, **data}
    summary = _summary(read.event, data) + ("" if changed else f" (ignored: {verdict.why})")
    refresh = verdict.refresh or (is_new and not end_user.first_name)
    return EventOutcome(
        applied=changed,
        summary=summary,
        then=(lambda: queue_refresh(end_user)) if refresh else None,
    )


def _verdict(
    end_user: EndUser, *, is_new: bool, read: UserEventRead, data: dict[str, Any]
) -> UserVerdict:
    known = UserKnown(
        upstream_updated_at=None if is_new else end_user.upstream_updated_at,
        verification_status="" if is_new else end_user.verification_status,
        verification_id="" if is_new else end_user.verification_id,
        is_new=is_new,
    )
    return decide_user_event(
        known,
        event=read.event,
        event_at=read.event_at,
        verification_id=str(data.get("id") or ""),
        restarts_verification=bool(data.get("requires_reverification"))
        and bool(data.get("verification_triggered")),
    )


def _apply_fields(end_user: EndUser, *, read: UserEventRead, data: dict[str, Any]) -> None:
    """The profile the event carries (user.updated names its changes in updated_fields)."""
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
    if read.event_at is not None:
        if read.event is UserEvent.CREATED:
            end_user.upstream_created_at = read.event_at
        end_user.upstream_updated_at = read.event_at
    if read.event is UserEvent.UPDATED and "requires_reverification" in data:
        end_user.requires_reverification = bool(data["requires_reverification"])


def _apply_verification(end_user: EndUser, *, read: UserEventRead, data: dict[str, Any]) -> None:
    """The verification state (a decision also brings its id, and its reasons or KYC type)."""
    event = read.event
    if read.status:
        end_user.status = read.status
    if read.verification:
        end_user.verification_status = read.verification
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
        end_user.reasons = [] if read.verification != "rejected" else end_user.reasons


def _summary(event: UserEvent, data: dict[str, Any]) -> str:
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
