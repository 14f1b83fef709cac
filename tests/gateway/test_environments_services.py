"""Environment services: encrypted storage, masking, blank-keeps-value, switching, audit trail."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection

from gateway.models import Environment, EnvironmentKind, StaffEnvironmentChoice
from gateway.selectors import environment_current
from gateway.services.environments import (
    EnvironmentNotActive,
    environment_create,
    environment_switch,
    environment_update,
    environment_verification_record,
)
from gateway.templatetags.gateway_tags import masked
from staff import crypto
from staff.models import AuditEntry, StaffUser
from tests.identity import stepped_up

pytestmark = pytest.mark.django_db

CLIENT_ID = "0f8f2c0e-1c1e-4a4b-9d54-2b8e5e0a7d11"
PASSWORD = "correct-horse-battery-staple"
API_KEY = "sk_live_abcdefghijklmnop1234"


@pytest.fixture
def admin_user() -> StaffUser:
    # Right after a second factor: these test the services' rules, not step-up.
    return stepped_up(StaffUser.objects.create_user("admin-g2@example.test", "pw-not-used-123"))


def _create(by: StaffUser | None, **overrides: object) -> Environment:
    values: dict[str, object] = {
        "name": "Sandbox A",
        "kind": EnvironmentKind.SANDBOX,
        "base_url": "https://api.example.test",
        "client_id": CLIENT_ID,
        "password": PASSWORD,
        "api_key": API_KEY,
    }
    values.update(overrides)
    return environment_create(by=by, **values)  # type: ignore[arg-type]


def _raw_row(pk: int) -> tuple[str, ...]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT client_id_encrypted, password_encrypted, api_key_encrypted "
            "FROM gateway_environment WHERE id = %s",
            [pk],
        )
        return cursor.fetchone()


def test_create_stores_credentials_encrypted_never_in_plain(admin_user: StaffUser) -> None:
    environment = _create(admin_user)
    raw = _raw_row(environment.pk)
    for column, secret in zip(raw, (CLIENT_ID, PASSWORD, API_KEY), strict=True):
        assert column
        assert secret not in column
        assert crypto.decrypt(column) == secret
    reloaded = Environment.objects.get(pk=environment.pk)
    assert (reloaded.client_id, reloaded.password, reloaded.api_key) == (
        CLIENT_ID,
        PASSWORD,
        API_KEY,
    )


def test_masked_display_shows_only_the_last_characters(admin_user: StaffUser) -> None:
    environment = _create(admin_user)
    shown = masked(environment, "api_key")
    assert shown.endswith(API_KEY[-4:])
    assert API_KEY[:-4] not in shown
    assert masked(environment, "password").endswith(PASSWORD[-4:])
    assert masked(environment, "not_a_credential") == "not set"


def test_update_with_blank_credentials_keeps_the_stored_values(admin_user: StaffUser) -> None:
    environment = _create(admin_user)
    before = _raw_row(environment.pk)
    environment_update(
        environment=environment,
        by=admin_user,
        client_id="",
        password=None,
        api_key="",
        weekly_budget=500,
        name="Sandbox renamed",
    )
    reloaded = Environment.objects.get(pk=environment.pk)
    assert _raw_row(environment.pk) == before
    assert reloaded.api_key == API_KEY
    assert reloaded.weekly_budget == 500
    assert reloaded.name == "Sandbox renamed"


def test_update_replaces_only_the_given_credential(admin_user: StaffUser) -> None:
    environment = _create(admin_user)
    environment_update(environment=environment, by=admin_user, api_key="new-api-key-999999")
    reloaded = Environment.objects.get(pk=environment.pk)
    assert reloaded.api_key == "new-api-key-999999"
    assert reloaded.password == PASSWORD
    assert reloaded.client_id == CLIENT_ID


def test_audit_entries_record_changes_without_secrets(admin_user: StaffUser) -> None:
    environment = _create(admin_user, background_share=Decimal("0.25"))
    environment_update(
        environment=environment, by=admin_user, password="a-new-password-42", weekly_budget=700
    )
    entries = list(AuditEntry.objects.filter(target_id=str(environment.pk)).order_by("at", "pk"))
    assert [e.action for e in entries] == ["environment.created", "environment.updated"]
    assert all(e.actor == admin_user for e in entries)
    assert entries[0].details["background_share"] == "0.25"
    assert entries[1].details["changed"] == {"weekly_budget": {"from": 10000, "to": 700}}
    assert entries[1].details["credentials_replaced"] == ["password"]
    dumped = repr([e.details for e in entries])
    for secret in (CLIENT_ID, PASSWORD, API_KEY, "a-new-password-42"):
        assert secret not in dumped


def test_update_refuses_unknown_fields(admin_user: StaffUser) -> None:
    environment = _create(admin_user)
    with pytest.raises(TypeError):
        environment_update(environment=environment, by=admin_user, api_root="http://evil")


def test_current_environment_defaults_to_first_active_sandbox_then_follows_switch(
    admin_user: StaffUser,
) -> None:
    assert environment_current(user=admin_user) is None
    _create(admin_user, name="Production", kind=EnvironmentKind.PRODUCTION)
    _create(admin_user, name="Inactive sandbox", is_active=False)
    first = _create(admin_user, name="Z first sandbox")
    _create(admin_user, name="A second sandbox")
    assert environment_current(user=admin_user) == first

    production = Environment.objects.get(name="Production")
    environment_verification_record(
        environment=production, by=admin_user, verified=True, reason="test"
    )
    environment_switch(user=admin_user, environment=production, confirmed=True)
    assert environment_current(user=admin_user) == production
    assert StaffEnvironmentChoice.objects.filter(user=admin_user).count() == 1
    assert AuditEntry.objects.filter(action="environment.switched", actor=admin_user).exists()

    # A chosen environment that is deactivated later falls back to the default.
    environment_update(environment=production, by=admin_user, is_active=False)
    assert environment_current(user=admin_user) == first


def test_switch_to_an_inactive_environment_is_refused(admin_user: StaffUser) -> None:
    inactive = _create(admin_user, is_active=False)
    with pytest.raises(EnvironmentNotActive):
        environment_switch(user=admin_user, environment=inactive)
    assert not StaffEnvironmentChoice.objects.exists()
