"""audit_record: who did what to which object, JSON-safe details, secrets never stored."""

from __future__ import annotations

from decimal import Decimal
from uuid import UUID

import pytest
from django.contrib.auth.models import AnonymousUser

from staff.audit import audit_record
from staff.models import AuditEntry, StaffUser
from staff.redaction import REDACTED

pytestmark = pytest.mark.django_db


def test_records_actor_action_and_target() -> None:
    actor = StaffUser.objects.create_user("a@payops.local", "x")
    target = StaffUser.objects.create_user("b@payops.local", "x")
    entry = audit_record(actor=actor, action="staff.role_changed", target=target)
    entry.refresh_from_db()
    assert entry.actor == actor
    assert entry.action == "staff.role_changed"
    assert (entry.target_type, entry.target_id) == ("staff.staffuser", str(target.pk))
    assert entry.details == {}


def test_details_keep_money_and_ids_as_strings() -> None:
    entry = audit_record(
        actor=None,
        action="payout.initiated",
        details={
            "amount": Decimal("100.50"),
            "currency": "USD",
            "payout_id": UUID("12345678-1234-5678-1234-567812345678"),
        },
    )
    entry.refresh_from_db()
    assert entry.details == {
        "amount": "100.50",
        "currency": "USD",
        "payout_id": "12345678-1234-5678-1234-567812345678",
    }


def test_secret_looking_keys_are_redacted_at_any_depth() -> None:
    entry = audit_record(
        actor=None,
        action="gateway.environment_updated",
        details={
            "name": "Sandbox",
            "password": "hunter2",
            "credentials": {"api_key": "k-123", "client_id": "c-1"},
            "headers": [{"Authorization": "Bearer abc"}],
            "webhook_secret": "s",
        },
    )
    entry.refresh_from_db()
    assert entry.details == {
        "name": "Sandbox",
        "password": REDACTED,
        "credentials": {"api_key": REDACTED, "client_id": "c-1"},
        "headers": [{"Authorization": REDACTED}],
        "webhook_secret": REDACTED,
    }
    stored = str(AuditEntry.objects.values_list("details", flat=True).get())
    for secret in ("hunter2", "k-123", "Bearer abc"):
        assert secret not in stored


def test_an_anonymous_actor_is_recorded_as_the_system() -> None:
    entry = audit_record(actor=AnonymousUser(), action="webhooks.received")  # type: ignore[arg-type]
    assert entry.actor is None
    assert "system" in str(entry)
