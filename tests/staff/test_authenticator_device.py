"""Authenticator apps (staff.AuthenticatorDevice): the seed is encrypted at rest, codes verify
once each, wrong codes are throttled, and the old plain TOTPDevice rows are moved and encrypted."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.db import connection
from django_otp.oath import hotp, totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from staff import crypto
from staff.models import AuthenticatorDevice
from staff.roles import ROLES
from staff.second_factor.models import seed_encrypt
from tests.identity import client_signed_in, enrolled
from tests.staff.second_factor_support import code_now, fresh_code, password_signed_in, person

pytestmark = pytest.mark.django_db

_migration = __import__(
    "staff.migrations.0006_authenticator_seeds_from_totpdevice", fromlist=["totp_devices_encrypt"]
)


def _raw_seed_column(device: AuthenticatorDevice) -> str:
    table = connection.ops.quote_name(AuthenticatorDevice._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT seed_encrypted FROM {table} WHERE id = %s", [device.pk])
        (value,) = cursor.fetchone()
    return str(value)


def _seed_forms(seed: bytes) -> list[str]:
    """Every way a seed could be written down: hex (both cases) and base32."""
    device = AuthenticatorDevice(seed_encrypted=seed_encrypt(seed))
    return [seed.hex(), seed.hex().upper(), device.seed_base32()]


def test_the_seed_column_holds_ciphertext_never_the_seed() -> None:
    device = enrolled(person("seed-at-rest@example.test", "finance_approver"))

    raw = _raw_seed_column(device)

    assert raw and all(form not in raw for form in _seed_forms(device.seed))
    assert crypto.decrypt(raw) == device.seed.hex()
    assert len(device.seed) == 20


def test_a_code_verifies_once_and_its_replay_is_refused() -> None:
    device = enrolled(person("replay-model@example.test", "finance_approver"))
    code = code_now(device)

    assert device.verify_token(code)
    device.refresh_from_db()
    assert device.last_t >= 0 and device.last_used_at is not None
    assert not device.verify_token(code)
    assert not AuthenticatorDevice.objects.get(pk=device.pk).verify_token(code)


def test_a_code_used_through_one_loaded_copy_is_refused_through_another() -> None:
    """Two requests holding the same device (loaded before either checked a code): the second
    reads the last used step again, under a row lock, so the code is not accepted twice."""
    device = enrolled(person("replay-race@example.test", "finance_approver"))
    first = AuthenticatorDevice.objects.get(pk=device.pk)
    second = AuthenticatorDevice.objects.get(pk=device.pk)
    code = code_now(device)

    assert first.verify_token(code)
    assert not second.verify_token(code)


def test_a_code_one_step_ahead_is_accepted_and_its_step_is_the_last_used() -> None:
    device = enrolled(person("drift@example.test", "finance_approver"))
    ahead = int(time.time()) // 30 + 1
    code = str(hotp(device.seed, ahead, digits=6)).zfill(6)

    assert device.verify_token(code)

    device.refresh_from_db()
    assert device.last_t == ahead
    # The app's clock is ahead by one step (0 if our clock reached that step meanwhile).
    assert device.drift in (0, 1)
    assert not device.verify_token(code_now(device, drift=-5))


def test_wrong_codes_are_throttled_until_the_wait_is_over(settings: Any) -> None:
    settings.OTP_TOTP_THROTTLE_FACTOR = 3600  # an hour after the first wrong code: no race
    device = enrolled(person("throttle@example.test", "finance_approver"))
    right = code_now(device)
    wrong = str((int(right) + 500_000) % 1_000_000).zfill(6)

    assert not device.verify_token(wrong)
    device.refresh_from_db()
    assert device.throttling_failure_count == 1
    assert not device.verify_is_allowed()[0]
    assert not device.verify_token(right)
    assert device.last_t == -1


def test_non_digit_and_wrong_length_codes_are_refused() -> None:
    device = enrolled(person("bad-input@example.test", "finance_approver"))
    code = code_now(device)

    assert not device.verify_token(f"0{code}")
    device.throttle_reset()
    assert not device.verify_token("abcdef")


def test_enrolment_shows_the_secret_and_qr_for_the_pending_app_only() -> None:
    maker = person("enrol-once@example.test", "finance_maker")
    client = password_signed_in(maker)

    page = client.get("/login/enrol/")
    device = AuthenticatorDevice.objects.get(user=maker, confirmed=False)
    secret = page.context["secret"]
    html = page.content.decode()

    assert secret.replace(" ", "") == device.seed_base32()
    assert secret in html and 'data-testid="totp-qr"' in html and "<svg" in html
    assert client.post("/login/enrol/totp/", {"code": fresh_code(device)}).status_code == 302
    # Confirmed: the secret is never shown again (the profile lists the app by name only).
    profile = client.get("/profile/").content.decode()
    assert secret not in profile and device.seed_base32() not in profile
    assert "Authenticator app" in profile


def test_the_demo_hint_is_the_code_the_app_shows() -> None:
    device = enrolled(person("demo-like@example.test", "finance_approver"))

    assert device.current_code() == code_now(device)


def test_old_totp_devices_move_into_encrypted_authenticators() -> None:
    user = person("migrated@example.test", "finance_approver")
    other = person("migrated-pending@example.test", "finance_maker")
    confirmed = TOTPDevice.objects.create(user=user, name="Phone", confirmed=True, last_t=7)
    pending = TOTPDevice.objects.create(user=other, name="Authenticator app", confirmed=False)
    seeds = {user.pk: confirmed.bin_key, other.pk: pending.bin_key}

    _migration.totp_devices_encrypt(django_apps, connection.schema_editor())

    assert not TOTPDevice.objects.exists()
    moved = {d.user_id: d for d in AuthenticatorDevice.objects.filter(user__in=[user, other])}
    assert moved[user.pk].name == "Phone" and moved[user.pk].confirmed
    assert moved[user.pk].last_t == 7
    assert moved[other.pk].name == "Authenticator app" and not moved[other.pk].confirmed
    for user_id, device in moved.items():
        assert device.seed == seeds[user_id]
        raw = _raw_seed_column(device)
        assert all(form not in raw for form in _seed_forms(seeds[user_id]))
    # The person's app keeps working: the code computed from the old seed verifies.
    app_code = str(totp(seeds[user.pk], step=30, t0=0, digits=6)).zfill(6)
    assert moved[user.pk].verify_token(app_code)


def test_a_session_verified_by_an_authenticator_passes_the_gate() -> None:
    approver = person("gate-pass@example.test", "finance_approver")

    assert client_signed_in(approver).get("/payouts/").status_code == 200


@pytest.mark.parametrize("role", [role.key for role in ROLES])
def test_no_role_but_a_superuser_reaches_the_authenticators_admin(role: str) -> None:
    holder = person(f"admin-page-{role}@example.test", role)
    client = client_signed_in(holder)
    outside = client.get("/admin/staff/authenticatordevice/")
    holder.is_staff = True  # even let into the Django admin, a role grants no view of the apps
    holder.save(update_fields=["is_staff"])
    inside = client.get("/admin/staff/authenticatordevice/")

    assert outside.status_code == 302 and outside["Location"].startswith("/admin/login/")
    assert inside.status_code == 403
