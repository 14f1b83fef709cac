"""Test helpers for who a test acts as: a user with a fresh second factor behind them.

Service-level tests that exercise an approval, a release or an admin change (not step-up itself)
call `stepped_up(user)`, which attaches the proof a session has right after verifying a second
factor; the tests of step-up (tests/staff) prove what happens without it.
"""

from __future__ import annotations

from django.utils import timezone

from staff.step_up import Proof, proof_attach


def stepped_up[U](user: U) -> U:
    """`user`, carrying a session proof whose second factor was verified just now."""
    proof_attach(user, Proof(method="session", second_factor_at=timezone.now()))
    return user
