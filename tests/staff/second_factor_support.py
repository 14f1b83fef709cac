"""Shared steps of the second-factor tests: people by role, codes their apps show, signing in."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.test import Client
from django_otp.oath import totp

from staff.models import AuthenticatorDevice, StaffUser

PASSWORD = "pw-second-factor-12345"


def person(email: str, *roles: str, superuser: bool = False) -> StaffUser:
    user = StaffUser.objects.create_user(
        email, PASSWORD, is_superuser=superuser, is_staff=superuser
    )
    for role in roles:
        user.groups.add(Group.objects.get(name=role))
    return user


def code_now(device: AuthenticatorDevice, *, drift: int = 0) -> str:
    """The code the person's app shows now (RFC 6238 from the decrypted seed: 30 s, 6 digits)."""
    return str(totp(device.seed, step=30, t0=0, digits=6, drift=drift)).zfill(6)


def fresh_code(device: AuthenticatorDevice) -> str:
    """The app's current code, the device's record of used time steps forgotten (a new window)."""
    AuthenticatorDevice.objects.filter(pk=device.pk).update(last_t=-1, throttling_failure_count=0)
    device.refresh_from_db()
    return code_now(device)


def password_signed_in(user: StaffUser) -> Client:
    """A client that passed the password step of the real sign-in page (not the second factor)."""
    client = Client()
    response = client.post("/login/", {"username": user.email, "password": PASSWORD})
    assert response.status_code == 302, response.content[:500]
    return client
