"""Step-up: a fresh second factor, from the session's proof or a stepped-up token."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from staff.models import StaffUser
from staff.step_up import (
    SECOND_FACTOR_AT_SESSION_KEY,
    Proof,
    StepUpRequired,
    proof_attach,
    proof_of,
    step_up_fresh,
    step_up_require,
)


def test_a_user_without_proof_has_not_stepped_up() -> None:
    user = StaffUser(email="a@example.test")
    assert not step_up_fresh(user)
    with pytest.raises(StepUpRequired) as refused:
        step_up_require(user, action="payout.approve")
    assert refused.value.status == 403
    assert refused.value.code == "step_up_required"


def test_a_session_second_factor_is_fresh_for_the_configured_minutes(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PAYOPS_STEP_UP_MINUTES = 5
    user = StaffUser(email="a@example.test")
    now = timezone.now()
    proof_attach(user, Proof(method="session", second_factor_at=now - timedelta(minutes=4)))
    assert step_up_fresh(user, now=now)
    step_up_require(user, action="payout.approve")
    proof_attach(user, Proof(method="session", second_factor_at=now - timedelta(minutes=6)))
    assert not step_up_fresh(user, now=now)
    proof_attach(user, Proof(method="session"))
    assert not step_up_fresh(user, now=now)


def test_a_stepped_up_token_stands_for_its_step_up_and_a_plain_one_does_not() -> None:
    user = StaffUser(email="a@example.test")
    long_ago = timezone.now() - timedelta(days=30)
    proof_attach(user, Proof(method="token", second_factor_at=long_ago, scopes=frozenset()))
    assert step_up_fresh(user)
    proof_attach(user, Proof(method="token", scopes=frozenset({"read"})))
    assert not step_up_fresh(user)


@pytest.mark.django_db
def test_the_middleware_attaches_the_sessions_proof_to_request_user() -> None:
    user = StaffUser.objects.create_user("proof@example.test", "pw-proof-12345")
    client = Client()
    client.force_login(user)
    response = client.get("/")
    assert proof_of(response.wsgi_request.user) == Proof(method="session")
    session = client.session
    verified = timezone.now().replace(microsecond=0)
    session[SECOND_FACTOR_AT_SESSION_KEY] = verified.isoformat()
    session.save()
    response = client.get("/")
    assert proof_of(response.wsgi_request.user) == Proof(
        method="session", second_factor_at=verified
    )
