"""End-user writes: create and update through the gateway, refresh from it."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from gateway.client import call_sync, upstream
from gateway.models import Environment
from gateway.schemas import User as UpstreamUser
from staff import roles
from staff.actions import record_action
from staff.errors import ServiceError
from staff.models import StaffUser
from users.mirror import (
    MirrorKind,
    mirror_create,
    parse_time,
    record_refresh,
    refresh_after_commit,
    require,
    timeline_add,
    upstream_answer,
)
from users.models import EndUser, EndUserStatus, EndUserType, VerificationStatus
from users.validation import (
    normalise_country,
    normalise_email,
    normalise_name,
    normalise_phone,
)

# Changing one of these restarts verification upstream (decisions.md 3 "User").
IDENTITY_FIELDS = ("first_name", "last_name", "country")
EDITABLE_FIELDS = ("email", "phone_number", "first_name", "last_name", "country")

# The audit snapshot: key -> attribute.
SNAPSHOT_FIELDS = {
    name: name
    for name in (
        "upstream_id",
        "type",
        "email",
        "phone_number",
        "first_name",
        "last_name",
        "country",
        "status",
        "verification_status",
        "reasons",
    )
}


def validate_fields(values: dict[str, Any], *, partial: bool = False) -> dict[str, str]:
    """Checked, normalised end-user fields, or a ServiceError naming each bad field."""
    problems: list[tuple[str, str]] = []
    clean: dict[str, str] = {}
    checks = {
        "email": normalise_email,
        "first_name": lambda v: normalise_name(v, label=gettext("first name")),
        "last_name": lambda v: normalise_name(v, label=gettext("last name")),
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
            problems.append(("type", gettext("Choose individual or business.")))
        clean["type"] = kind
    if problems:
        raise ServiceError(gettext("Some fields need correcting."), errors=problems)
    return clean


# --- create ----------------------------------------------------------------------------------


def _apply_answer(end_user: EndUser, record: UpstreamUser) -> None:
    _apply_record(end_user, record.model_dump(mode="json"))


def _fold_early(end_user: EndUser, early: EndUser) -> None:
    """Keep what only the early row's events told (its timeline moved already)."""
    for name in ("upstream_updated_at", "verification_id", "verified_at", "kyc_type"):
        setattr(end_user, name, getattr(early, name))


END_USER: MirrorKind[EndUser, UpstreamUser] = MirrorKind(
    model=EndUser,
    audit="end_user",
    snapshot_fields=SNAPSHOT_FIELDS,
    upstream_id_of=lambda record: record.user_id,
    apply_answer=_apply_answer,
    fold_early=_fold_early,
)


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

    return mirror_create(
        END_USER,
        environment_id=environment.pk,
        request_key=request_key,
        request=clean,
        defaults=clean,
        by=by,
        send=lambda end_user: call_sync(
            upstream(environment).users.create,
            idempotency_key=str(end_user.idempotency_key),
            **clean,
        ),
        refused_for_good=(400,),
        what="the new end user",
        created_summary=lambda end_user: f"Created by {by.email}",
    )


def _apply_record(end_user: EndUser, data: dict[str, Any]) -> None:
    """Set the fields of a full upstream record (a create/update/get answer): it is current."""
    # The upstream names the phone `phone_number` in requests and `phone` in records and events.
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
    created = parse_time(data.get("created_at"), field="created_at")
    updated = parse_time(data.get("updated_at"), field="updated_at")
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
            gettext("The type of an end user cannot change."),
            errors=[("type", gettext("cannot be changed"))],
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
        raise ServiceError(gettext("This end user is not created upstream yet."), code="not_synced")
    changes = end_user_changes(end_user, values)
    if not changes:
        raise ServiceError(gettext("Nothing changed."), code="no_changes")
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
    before = END_USER.snapshot(end_user)
    record = upstream_answer(
        upstream(end_user.environment).users.update,
        end_user.upstream_id,
        what="the change",
        **changes,
    )
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
        record_action(
            actor=by,
            action="end_user.updated",
            target=end_user,
            details={"before": before, "after": END_USER.snapshot(end_user), "sent": changes},
        )
    return end_user


# --- refresh ---------------------------------------------------------------------------------


def end_user_refresh(*, end_user: EndUser, by: StaffUser | None) -> EndUser:
    """Read the record from the upstream and take it as current (by None: a background task)."""
    require(by, roles.DIRECTORY_VIEW)
    if not end_user.is_synced:
        raise ServiceError(gettext("This end user is not created upstream yet."), code="not_synced")
    record = upstream_answer(
        upstream(end_user.environment, background=by is None).users.get,
        end_user.upstream_id,
        what="the refresh",
    )
    with transaction.atomic():
        end_user = EndUser.objects.select_for_update().get(pk=end_user.pk)
        before = END_USER.snapshot(end_user)
        _apply_record(end_user, record.model_dump(mode="json"))
        end_user.save()
        record_refresh(END_USER, end_user, before=before, by=by, timeline_keeps_before=True)
    return end_user


def queue_refresh(end_user: EndUser) -> None:
    """Refresh the end user in the background once the transaction commits."""
    from users.tasks import end_user_refresh_task

    refresh_after_commit(end_user_refresh_task, end_user)
