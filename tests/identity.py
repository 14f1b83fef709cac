"""Test helpers for who a test acts as: a user with a fresh second factor behind them.

Service-level tests that exercise an approval, a release or an admin change (not step-up itself)
call `stepped_up(user)`, which attaches the proof a session has right after verifying a second
factor; the tests of step-up (tests/staff) prove what happens without it.

Page tests sign in with `client_signed_in(user)`: a session that passed the whole sign-in, second
factor included (the person gets a confirmed authenticator app first if they have none), as the
sign-in gate (staff.second_factor.gate) lets through.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.test import Client
from django.utils import timezone
from django_otp import DEVICE_ID_SESSION_KEY

from staff.api_tokens import api_token_create, is_privileged, scopes_within_role
from staff.models import ApiToken, AuthenticatorDevice, StaffUser
from staff.step_up import SECOND_FACTOR_AT_SESSION_KEY, Proof, proof_attach, step_up_minutes


def stepped_up[U](user: U) -> U:
    """`user`, carrying a session proof whose second factor was verified just now."""
    proof_attach(
        user,
        Proof(method="session", second_factor_at=timezone.now(), second_factor_method="totp"),
    )
    return user


def enrolled(user: StaffUser) -> AuthenticatorDevice:
    """The person's confirmed authenticator app (made, with a random secret, if they have none)."""
    device = AuthenticatorDevice.objects.filter(user=user, confirmed=True).first()
    if device is None:
        device = AuthenticatorDevice.objects.create(
            user=user, name="Test authenticator", confirmed=True
        )
    return device


def client_signed_in(user: StaffUser, *, second_factor: bool = True) -> Client:
    """A test client signed in as `user`, as if they had just passed sign-in's second factor.

    `second_factor=False`: a session whose second factor is not fresh (it passed sign-in longer
    ago than PAYOPS_STEP_UP_MINUTES), e.g. to test step-up.
    """
    client = Client()
    client.force_login(user)
    device = enrolled(user)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    at = timezone.now()
    if not second_factor:
        at -= timedelta(minutes=step_up_minutes() + 1)
    session[SECOND_FACTOR_AT_SESSION_KEY] = at.isoformat()
    session.save()
    return client


def token_with_scopes(user: StaffUser, scopes: Iterable[str], *, days: int = 30) -> str:
    """A bearer token of `user` holding `scopes` as stored, even scopes beyond the person's roles.

    Creation refuses those today (staff.api_tokens), but a token made before its owner lost a
    role holds them: tests of what a token may do at use (never more than its owner) need one.
    """
    wanted = list(scopes)
    allowed = scopes_within_role(user)
    within = [scope for scope in wanted if scope in allowed] or allowed[:1]
    new = api_token_create(user=user, name="t", scopes=within, days=days)
    if within != wanted:
        stepped = timezone.now() if is_privileged(wanted) else new.token.stepped_up_at
        ApiToken.objects.filter(pk=new.token.pk).update(scopes=wanted, stepped_up_at=stepped)
    return new.plaintext
