"""Sign-in, wrong password, lockout (more in test_lockout.py), sign-out by POST, password change."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from staff.bootstrap import DEMO_PASSWORD
from staff.models import AuditEntry, StaffUser

pytestmark = pytest.mark.django_db

WRONG_PASSWORD_MESSAGE = "Wrong email or password."


def sign_in(client: Client, email: str, password: str, **extra: str):  # type: ignore[no-untyped-def]
    return client.post("/login/", {"username": email, "password": password, **extra})


def test_sign_in_lands_on_the_dashboard_and_is_audited(demo_staff: dict[str, StaffUser]) -> None:
    client = Client()
    response = sign_in(client, "maker@payops.local", DEMO_PASSWORD)
    assert response.status_code == 302
    assert response["Location"] == "/"
    page = client.get("/")
    assert page.status_code == 200
    assert "maker@payops.local" in page.content.decode()
    entry = AuditEntry.objects.get(action="staff.login")
    assert entry.actor == demo_staff["finance_maker"]
    assert entry.details["ip"] == "127.0.0.1"


def test_sign_in_ignores_the_case_of_the_email(demo_staff: dict[str, StaffUser]) -> None:
    response = sign_in(Client(), "Maker@PayOps.Local", DEMO_PASSWORD)
    assert response.status_code == 302


def test_sign_in_follows_a_safe_next_url(demo_staff: dict[str, StaffUser]) -> None:
    response = sign_in(Client(), "admin@payops.local", DEMO_PASSWORD, next="/system/health/")
    assert response["Location"] == "/system/health/"
    response = sign_in(Client(), "admin@payops.local", DEMO_PASSWORD, next="https://evil.example/")
    assert response["Location"] == "/"


def test_wrong_password_shows_a_clear_message_and_is_audited(
    demo_staff: dict[str, StaffUser],
) -> None:
    response = sign_in(Client(), "maker@payops.local", "not-the-password")
    assert response.status_code == 200
    body = response.content.decode()
    assert WRONG_PASSWORD_MESSAGE in body
    assert 'data-testid="login-error"' in body
    entry = AuditEntry.objects.get(action="staff.login_failed")
    assert entry.actor is None
    assert entry.details == {"email": "maker@payops.local", "ip": "127.0.0.1"}
    assert "not-the-password" not in str(entry.details)


def test_unknown_email_gets_the_same_message(demo_staff: dict[str, StaffUser]) -> None:
    body = sign_in(Client(), "nobody@payops.local", "whatever").content.decode()
    assert WRONG_PASSWORD_MESSAGE in body


def test_anonymous_visitors_are_sent_to_sign_in() -> None:
    response = Client().get("/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/"


def test_repeated_failures_lock_sign_in_and_say_when_to_retry(
    demo_staff: dict[str, StaffUser],
) -> None:
    client = Client()
    limit = settings.PAYOPS_LOGIN_FAILURE_LIMIT
    for _ in range(limit - 1):
        assert sign_in(client, "approver@payops.local", "wrong").status_code == 200
    locked = sign_in(client, "approver@payops.local", "wrong")
    assert locked.status_code == 429
    body = locked.content.decode()
    assert "Sign-in locked" in body
    assert "You can try again in" in body
    assert "seconds" in body  # PAYOPS_LOGIN_BACKOFF_SECONDS defaults to 30
    assert " UTC" in body
    # Even the right password is refused while the lock lasts.
    again = sign_in(client, "approver@payops.local", DEMO_PASSWORD)
    assert again.status_code == 429
    assert "_auth_user_id" not in client.session
    # Another account from the same address is not locked (the lock is per account).
    assert sign_in(Client(), "maker@payops.local", DEMO_PASSWORD).status_code == 302


def test_sign_out_needs_a_post_and_is_audited(client_for) -> None:  # type: ignore[no-untyped-def]
    client = client_for("compliance")
    assert client.get("/logout/").status_code == 405
    assert client.get("/").status_code == 200
    response = client.post("/logout/", follow=True)
    assert response.redirect_chain[-1][0] == "/login/"
    assert "You have signed out." in response.content.decode()
    assert client.get("/").status_code == 302
    assert AuditEntry.objects.filter(action="staff.logout").count() == 1


def test_password_change_replaces_the_password(
    demo_staff: dict[str, StaffUser], client_for
) -> None:  # type: ignore[no-untyped-def]
    client = client_for("finance_maker")
    page = client.get("/password/")
    assert page.status_code == 200
    response = client.post(
        "/password/",
        {
            "old_password": DEMO_PASSWORD,
            "new_password1": "correct-horse-battery-42",
            "new_password2": "correct-horse-battery-42",
        },
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/"
    assert "Your password has been changed." in response.content.decode()
    user = StaffUser.objects.get(email="maker@payops.local")
    assert user.check_password("correct-horse-battery-42")
    assert not user.check_password(DEMO_PASSWORD)
    # The session survives the change.
    assert client.get("/").status_code == 200
    assert AuditEntry.objects.filter(action="staff.password_changed", actor=user).count() == 1


def test_password_change_rejects_a_wrong_old_password(client_for) -> None:  # type: ignore[no-untyped-def]
    client = client_for("finance_maker")
    response = client.post(
        "/password/",
        {
            "old_password": "nope",
            "new_password1": "correct-horse-battery-42",
            "new_password2": "correct-horse-battery-42",
        },
    )
    assert response.status_code == 200
    assert "Your old password was entered incorrectly" in response.content.decode()
    assert StaffUser.objects.get(email="maker@payops.local").check_password(DEMO_PASSWORD)
