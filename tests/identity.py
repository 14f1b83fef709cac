"""Test helpers for who a test acts as: a user with a fresh second factor behind them.

Service-level tests that exercise an approval, a release or an admin change (not step-up itself)
call `stepped_up(user)`, which attaches the proof a session has right after verifying a second
factor; the tests of step-up (tests/staff) prove what happens without it.
"""

from __future__ import annotations

from django.test import Client
from django.utils import timezone

from staff.models import StaffUser
from staff.step_up import SECOND_FACTOR_AT_SESSION_KEY, Proof, proof_attach


def stepped_up[U](user: U) -> U:
    """`user`, carrying a session proof whose second factor was verified just now."""
    proof_attach(user, Proof(method="session", second_factor_at=timezone.now()))
    return user


def client_signed_in(user: StaffUser, *, second_factor: bool = True) -> Client:
    """A test client signed in as `user`, as if they had just passed sign-in's second factor
    (`second_factor=False`: a session that has not verified one, e.g. to test step-up)."""
    client = Client()
    client.force_login(user)
    if second_factor:
        session = client.session
        session[SECOND_FACTOR_AT_SESSION_KEY] = timezone.now().isoformat()
        session.save()
    return client
