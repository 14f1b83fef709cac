"""End-user services against the emulator over HTTP: create once, KYC outcomes, update, refresh."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied

from emulator.models import EmulatedUser
from gateway.models import Environment
from staff.errors import ServiceError
from staff.models import AuditEntry, StaffUser
from tests.directory.conftest import emulator_events, user_values
from users.events import end_user_apply_event
from users.models import EndUser, TimelineKind, VerificationStatus
from users.services import end_user_create, end_user_refresh, end_user_update


def create(environment: Environment, by: StaffUser, **overrides: Any) -> EndUser:
    return end_user_create(environment=environment, by=by, **user_values(**overrides))


def test_compliance_creates_a_user_that_the_sandbox_verifies(
    sandbox: Environment, staff: dict[str, StaffUser]
) -> None:
    user = create(sandbox, staff["compliance"])
    assert user.upstream_id
    assert user.verification_status == VerificationStatus.VERIFIED
    assert user.status == "verified"
    assert user.phone_number == "+525512345678"  # E.164
    entry = AuditEntry.objects.get(action="end_user.created")
    assert entry.actor == staff["compliance"]
    assert entry.details["before"] is None
    assert entry.details["after"]["email"] == "ana@example.com"
    assert user.timeline.filter(actor=staff["compliance"]).exists()


def test_a_reject_user_is_rejected_with_its_reason(
    sandbox: Environment, staff: dict[str, StaffUser]
) -> None:
    user = create(sandbox, staff["compliance"], email="bob+reject@example.com")
    assert user.verification_status == VerificationStatus.REJECTED
    # The user record carries no reasons (decisions.md 2 "Users"): they come with the event.
    (failed,) = emulator_events(sandbox, event="user.verification.failed")
    end_user_apply_event(environment=sandbox, event_type=failed["event"], data=failed["data"])
    user.refresh_from_db()
    assert user.reasons == ["document_unreadable"]
    assert user.verification_status == VerificationStatus.REJECTED


def test_a_review_user_waits_until_decided_then_a_refresh_shows_the_decision(
    sandbox: Environment, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    user = create(sandbox, staff["compliance"], email="cy+review@example.com")
    assert user.verification_status == VerificationStatus.NOT_STARTED
    live_emulator.control("POST", f"users/{user.upstream_id}/decision", json={"accept": True})
    user = end_user_refresh(end_user=user, by=staff["finance_approver"])
    assert user.verification_status == VerificationStatus.VERIFIED
    assert AuditEntry.objects.filter(action="end_user.refreshed").count() == 1


def test_a_double_submit_creates_one_upstream_user(
    sandbox: Environment, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    key = uuid.uuid4()
    first = end_user_create(
        environment=sandbox, by=staff["compliance"], request_key=key, **user_values()
    )
    second = end_user_create(
        environment=sandbox, by=staff["compliance"], request_key=key, **user_values()
    )
    assert first.pk == second.pk
    assert EndUser.objects.count() == 1
    assert live_emulator.witness.count("/v1/users", "POST") == 1


def test_a_retry_after_a_lost_response_creates_one_upstream_user(
    sandbox: Environment, staff: dict[str, StaffUser], live_emulator: Any, settings: Any
) -> None:
    settings.GATEWAY_MAX_ATTEMPTS = 1
    live_emulator.faults(drop_response_next=1)
    key = uuid.uuid4()
    with pytest.raises(ServiceError) as lost:
        end_user_create(
            environment=sandbox, by=staff["compliance"], request_key=key, **user_values()
        )
    assert lost.value.status == 503
    pending = EndUser.objects.get()
    assert not pending.is_synced  # kept, with its idempotency key, for the retry
    user = end_user_create(
        environment=sandbox, by=staff["compliance"], request_key=key, **user_values()
    )
    assert user.pk == pending.pk and user.is_synced
    assert EmulatedUser.objects.filter(email="ana@example.com").count() == 1
    assert live_emulator.witness.count("/v1/users", "POST") == 2


def test_bad_input_names_the_field_and_creates_nothing(
    sandbox: Environment, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    with pytest.raises(ServiceError) as bad:
        create(sandbox, staff["compliance"], phone_number="12", country="XX", email="nope")
    fields = {e.field for e in bad.value.errors}
    assert fields == {"phone_number", "country", "email"}
    assert bad.value.status == 400
    assert EndUser.objects.count() == 0
    assert live_emulator.witness.count("/v1/users", "POST") == 0


def test_a_finance_maker_cannot_create_end_users(
    sandbox: Environment, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    with pytest.raises(PermissionDenied):
        create(sandbox, staff["finance_maker"])
    assert EndUser.objects.count() == 0
    assert live_emulator.witness.count("/v1/users", "POST") == 0


def test_update_sends_only_changed_fields_and_asks_before_restarting_verification(
    sandbox: Environment, staff: dict[str, StaffUser]
) -> None:
    user = create(sandbox, staff["compliance"], email="dee+review@example.com")
    with pytest.raises(ServiceError) as warned:
        end_user_update(
            end_user=user,
            by=staff["compliance"],
            values={"email": user.email, "last_name": "Gómez"},
        )
    assert warned.value.code == "reverification_required"
    assert [e.field for e in warned.value.errors] == ["last_name"]
    assert not emulator_events(sandbox, event="user.updated")

    user = end_user_update(
        end_user=user,
        by=staff["compliance"],
        values={"email": user.email, "last_name": "Gómez"},
        confirm_reverification=True,
    )
    (updated,) = emulator_events(sandbox, event="user.updated")
    assert updated["data"]["updated_fields"] == {"last_name": "Gómez"}
    assert updated["data"]["requires_reverification"] is True
    assert user.last_name == "Gómez"
    assert user.verification_status == VerificationStatus.NOT_STARTED
    entry = AuditEntry.objects.get(action="end_user.updated")
    assert entry.details["before"]["last_name"] == "García"
    assert entry.details["after"]["last_name"] == "Gómez"


def test_a_contact_change_needs_no_confirmation(
    sandbox: Environment, staff: dict[str, StaffUser]
) -> None:
    user = create(sandbox, staff["compliance"])
    user = end_user_update(
        end_user=user, by=staff["compliance"], values={"phone_number": "+52 55 8765 4321"}
    )
    assert user.phone_number == "+525587654321"
    assert user.verification_status == VerificationStatus.VERIFIED


def test_a_refresh_that_changes_the_user_writes_one_timeline_line_keeping_the_old_values(
    sandbox: Environment, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    user = create(sandbox, staff["compliance"], email="di+review@example.com")
    live_emulator.control("POST", f"users/{user.upstream_id}/decision", json={"accept": True})
    end_user_refresh(end_user=user, by=None)
    end_user_refresh(end_user=user, by=staff["finance_approver"])  # nothing changed since
    (line,) = user.timeline.filter(summary__startswith="Refreshed from the upstream")
    assert line.kind == TimelineKind.SYSTEM and line.actor is None
    assert "verification_status" in line.summary.split(": ", 1)[1].split(", ")
    assert line.data["before"]["verification_status"] == VerificationStatus.NOT_STARTED
    (entry,) = AuditEntry.objects.filter(action="end_user.refreshed")
    assert entry.actor is None
    assert entry.details["after"]["verification_status"] == VerificationStatus.VERIFIED
