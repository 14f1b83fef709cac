"""Session expiry (staff.sessions): idle (shorter for approvers and admins) and 8 h absolute.

Time is controlled by moving the session's recorded times back, never by sleeping.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from staff.models import AuditEntry, StaffUser
from staff.sessions import (
    IDLE_MINUTES_KEY,
    LAST_SEEN_KEY,
    SIGNED_IN_AT_KEY,
    session_expiry,
)

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def test_the_pure_rule() -> None:
    def expiry(signed_in_minutes_ago: float, idle_minutes_ago: float, limit: int = 15) -> object:
        return session_expiry(
            signed_in_at=T0 - timedelta(minutes=signed_in_minutes_ago),
            last_seen_at=T0 - timedelta(minutes=idle_minutes_ago),
            idle_minutes=limit,
            now=T0,
        )

    assert expiry(60, 14) is None
    assert expiry(60, 15) == "idle"
    assert expiry(8 * 60 - 1, 0) is None
    assert expiry(8 * 60, 0) == "max_age"  # however active the person is
    assert expiry(8 * 60, 30) == "max_age"


def age(client: Client, *, signed_in: float = 0, idle: float = 0) -> None:
    """As if the session had signed in `signed_in` minutes earlier and idled `idle` minutes."""
    session = client.session
    for key, minutes in ((SIGNED_IN_AT_KEY, signed_in), (LAST_SEEN_KEY, idle)):
        moved = datetime.fromisoformat(session[key]) - timedelta(minutes=minutes)
        session[key] = moved.isoformat()
    session.save()


def signed_out(response) -> bool:  # type: ignore[no-untyped-def]
    return response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize(
    ("role", "limit"),
    [("finance_maker", 60), ("compliance", 60), ("finance_approver", 15), ("admin", 15)],
)
def test_idle_sessions_are_signed_out_after_their_roles_limit(
    client_for: Callable[[str], Client], role: str, limit: int
) -> None:
    client = client_for(role)
    assert client.session[IDLE_MINUTES_KEY] == limit
    age(client, idle=limit - 1)
    assert client.get("/").status_code == 200
    age(client, idle=limit + 1)
    response = client.get("/")
    assert signed_out(response)
    page = client.get(response["Location"])
    assert "minutes without activity" in page.content.decode()
    assert client.get("/").status_code == 302  # signed out for good, not just this request
    entry = AuditEntry.objects.get(action="staff.session_expired")
    assert entry.actor is not None and entry.actor.groups.get().name == role
    assert entry.details["reason"] == "idle"


def test_a_superuser_without_a_privileged_role_gets_the_short_limit(db: None) -> None:
    from staff.roles import roles_sync

    roles_sync()
    root = StaffUser.objects.create_superuser("root@example.test", "pw-root-12345")
    client = Client()
    client.force_login(root)
    assert client.session[IDLE_MINUTES_KEY] == 15


def test_the_limits_are_settings(client_for: Callable[[str], Client], settings) -> None:  # type: ignore[no-untyped-def]
    settings.PAYOPS_SESSION_IDLE_MINUTES = 5
    settings.PAYOPS_SESSION_IDLE_MINUTES_PRIVILEGED = 2
    assert client_for("finance_maker").session[IDLE_MINUTES_KEY] == 5
    assert client_for("finance_approver").session[IDLE_MINUTES_KEY] == 2


def test_an_active_session_ends_8_hours_after_sign_in(client_for: Callable[[str], Client]) -> None:
    client = client_for("finance_maker")
    age(client, signed_in=8 * 60 - 1)
    assert client.get("/").status_code == 200
    age(client, signed_in=2)  # last activity is recent: only the absolute age has passed
    response = client.get("/")
    assert signed_out(response)
    assert "8 hours after signing in" in client.get(response["Location"]).content.decode()
    entry = AuditEntry.objects.get(action="staff.session_expired")
    assert entry.details["reason"] == "max_age"


def test_last_activity_is_written_at_most_once_a_minute(
    client_for: Callable[[str], Client],
) -> None:
    client = client_for("finance_maker")
    before = client.session[LAST_SEEN_KEY]
    client.get("/")
    assert client.session[LAST_SEEN_KEY] == before  # less than a minute: the session is not saved
    age(client, idle=2)
    moved = client.session[LAST_SEEN_KEY]
    client.get("/")
    after = client.session[LAST_SEEN_KEY]
    assert after != moved
    assert datetime.fromisoformat(after) > datetime.fromisoformat(before)
    # Activity keeps an idle limit from passing: 40 + 40 minutes of use stays signed in.
    age(client, idle=40)
    assert client.get("/").status_code == 200
    age(client, idle=40)
    assert client.get("/").status_code == 200


def test_htmx_requests_are_sent_to_sign_in_with_hx_redirect(
    client_for: Callable[[str], Client],
) -> None:
    client = client_for("finance_approver")
    age(client, idle=16)
    response = client.get("/", headers={"HX-Request": "true"})
    assert response.status_code == 204
    assert response["HX-Redirect"] == "/login/"


def test_requests_that_never_load_the_user_do_not_touch_the_session(
    client_for: Callable[[str], Client],
) -> None:
    client = client_for("finance_approver")
    age(client, idle=16)
    expired_session = client.session.session_key
    assert client.get("/healthz").status_code == 200
    assert client.session.session_key == expired_session
    assert not AuditEntry.objects.filter(action="staff.session_expired").exists()
    assert signed_out(client.get("/"))
