"""Users of an API client: creation, update and the (sandbox-automatic) identity verification."""

from __future__ import annotations

import re
import uuid
from typing import Any

from django.db import transaction

from emulator import clock
from emulator.database import EMULATOR_DB
from emulator.domain.events import emit_about
from emulator.domain.formats import (
    EMAIL_RE,
    FieldErrors,
    iso,
    optional_str,
    validation_error,
)
from emulator.domain.lookup import owned_or_404
from emulator.errors import resource_error
from emulator.models import ApiClient, EmulatedUser

USER_TYPES = ("individual", "business")
CREATE_FIELDS = ("type", "email", "phone_number", "first_name", "last_name", "country")
UPDATE_FIELDS = ("email", "phone_number", "first_name", "last_name", "country")
# A change to one of these is a change of identity: verification starts again.
IDENTITY_FIELDS = ("first_name", "last_name", "country")
COUNTRY_RE = re.compile(r"^[A-Z]{2}$")
PHONE_RE = re.compile(r"^\+?[0-9 ()-]{6,20}$")
MODEL_FIELD = {"phone_number": "phone"}


# What a user reads as, in this order (after its `user_id`, before its timestamps).
PAYLOAD_FIELDS = (
    "type",
    "email",
    "phone",
    "first_name",
    "last_name",
    "country",
    "status",
    "verification_status",
    "verification_mode",
    "kyc_type",
    "requires_reverification",
)
# The fields every user.created / user.updated event opens with (after its `user_id`).
EVENT_FIELDS = ("type", "email", "phone", "status", "verification_status")


def _fields(user: EmulatedUser, names: tuple[str, ...]) -> dict[str, Any]:
    return {"user_id": str(user.user_id), **{name: getattr(user, name) for name in names}}


def user_payload(user: EmulatedUser) -> dict[str, Any]:
    return {
        **_fields(user, PAYLOAD_FIELDS),
        "created_at": iso(user.created_at),
        "updated_at": iso(user.updated_at),
    }


def _check_fields(body: dict[str, Any], names: tuple[str, ...], errors: FieldErrors) -> dict:
    values: dict[str, str] = {}
    for name in names:
        if name in body:
            values[name] = optional_str(body, name, errors, 200)
    if "email" in values and not EMAIL_RE.match(values["email"]):
        errors.add("email", "must be a valid e-mail address")
    if values.get("country") and not COUNTRY_RE.match(values["country"]):
        errors.add("country", "must be a two-letter country code (ISO 3166-1 alpha-2)")
    if values.get("phone_number") and not PHONE_RE.match(values["phone_number"]):
        errors.add("phone_number", "must be a phone number")
    return values


def user_get(*, client: ApiClient, environment: str, user_id: str) -> EmulatedUser:
    return owned_or_404(
        EmulatedUser,
        id_field="user_id",
        raw_id=user_id,
        client=client,
        environment=environment,
        code="USER_NOT_FOUND",
        message="User not found",
        error_field="user_id",
    )


def user_create(*, client: ApiClient, environment: str, body: dict[str, Any]) -> EmulatedUser:
    """Creates the user; in sandbox its verification is decided at once (decisions.md 5)."""
    errors = FieldErrors()
    unknown = sorted(set(body) - set(CREATE_FIELDS))
    for name in unknown:
        errors.add(name, "is not a known field")
    values = _check_fields(body, CREATE_FIELDS, errors)
    for name in CREATE_FIELDS:
        if name != "phone_number" and not values.get(name) and name not in dict(errors.items):
            errors.add(name, "is required")
    if values.get("type") and values["type"] not in USER_TYPES:
        errors.add("type", f"must be one of {', '.join(USER_TYPES)}")
    errors.raise_if_any()
    now = clock.now()
    with transaction.atomic(using=EMULATOR_DB):
        user = EmulatedUser.objects.create(
            client=client,
            environment=environment,
            type=values["type"],
            email=values["email"],
            phone=values.get("phone_number", ""),
            first_name=values["first_name"],
            last_name=values["last_name"],
            country=values["country"],
            created_at=now,
            updated_at=now,
        )
        emit_about(
            user,
            "user.created",
            {
                **_fields(user, EVENT_FIELDS),
                "verification_mode": user.verification_mode,
                "created_at": iso(now),
                "verification_triggered": True,
            },
        )
        _start_verification(user)
    return user


def user_update(
    *, client: ApiClient, environment: str, user_id: str, body: dict[str, Any]
) -> EmulatedUser:
    """Changes only the fields sent; a changed identity field restarts verification."""
    errors = FieldErrors()
    if "type" in body:
        errors.add("type", "cannot be changed")
    for name in sorted(set(body) - set(UPDATE_FIELDS) - {"type"}):
        errors.add(name, "is not a known field")
    values = _check_fields(body, UPDATE_FIELDS, errors)
    if not body:
        errors.add("body", "send at least one field to change")
    errors.raise_if_any()
    with transaction.atomic(using=EMULATOR_DB):
        user = user_get(client=client, environment=environment, user_id=user_id)
        user = EmulatedUser.objects.select_for_update().get(pk=user.pk)
        changed: dict[str, str] = {}
        for name, value in values.items():
            attribute = MODEL_FIELD.get(name, name)
            if getattr(user, attribute) != value:
                setattr(user, attribute, value)
                changed[name] = value
        reverify = any(name in IDENTITY_FIELDS for name in changed)
        user.updated_at = clock.now()
        if reverify:
            user.requires_reverification = True
            user.status = "unverified"
            user.verification_status = "not_started"
            user.rejection_reasons = []
        user.save()
        emit_about(
            user,
            "user.updated",
            {
                **_fields(user, EVENT_FIELDS),
                "updated_at": iso(user.updated_at),
                "updated_fields": changed,
                "requires_reverification": user.requires_reverification,
                "verification_triggered": reverify,
            },
        )
        if reverify:
            _start_verification(user)
    return user


def _start_verification(user: EmulatedUser) -> None:
    """Sandbox decides from the e-mail; production waits for a decision (/_control)."""
    if user.environment != "sandbox":
        return
    local_part = user.email.split("@", 1)[0].lower()
    if "+review" in local_part:
        return
    if "+reject" in local_part:
        _decide(user, accept=False, reasons=["document_unreadable"])
    else:
        _decide(user, accept=True, reasons=[])


def _decide(user: EmulatedUser, *, accept: bool, reasons: list[str]) -> None:
    user.updated_at = clock.now()
    verification_id = f"ver_{uuid.uuid4()}"
    if accept:
        user.status = "verified"
        user.verification_status = "verified"
        user.requires_reverification = False
        user.rejection_reasons = []
        user.save()
        emit_about(
            user,
            "user.verification.accepted",
            {
                "user_id": str(user.user_id),
                "id": verification_id,
                "verification_status": "verified",
                "kyc_type": user.kyc_type,
            },
        )
        return
    user.status = "unverified"
    user.verification_status = "rejected"
    user.rejection_reasons = reasons
    user.save()
    emit_about(
        user,
        "user.verification.failed",
        {
            "user_id": str(user.user_id),
            "id": verification_id,
            "verification_status": "rejected",
            "reasons": reasons,
        },
    )


def user_decide(*, user_id: str, accept: Any, reasons: Any) -> EmulatedUser:
    """The control decision for a user whose verification is pending (`not_started`)."""
    if not isinstance(accept, bool):
        raise validation_error([("accept", "must be true or false")])
    if reasons is None:
        reasons = [] if accept else ["document_unreadable"]
    if not isinstance(reasons, list) or not all(isinstance(item, str) for item in reasons):
        raise validation_error([("reasons", "must be a list of strings")])
    try:
        key = uuid.UUID(str(user_id))
    except ValueError:
        raise resource_error(404, "USER_NOT_FOUND", "User not found") from None
    with transaction.atomic(using=EMULATOR_DB):
        user = EmulatedUser.objects.select_for_update().filter(user_id=key).first()
        if user is None:
            raise resource_error(404, "USER_NOT_FOUND", "User not found")
        if user.verification_status != "not_started":
            raise resource_error(
                409,
                "USER_NOT_PENDING",
                f"Verification is already {user.verification_status}",
                [("verification_status", user.verification_status)],
            )
        _decide(user, accept=accept, reasons=reasons)
    return user
