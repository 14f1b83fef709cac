"""In Chromium: the locked sign-in says when to try again; an idle session ends on the sign-in
page with the reason. Time is moved by editing the stored records, never by waiting."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.db.models import F
from playwright.sync_api import Page, expect

from staff.models import StaffUser
from staff.sessions import LAST_SEEN_KEY

pytestmark = pytest.mark.browser


def test_a_locked_account_says_when_to_try_again_and_lets_the_person_in_after(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    for _ in range(settings.PAYOPS_LOGIN_FAILURE_LIMIT):
        sign_in(page, "maker@payops.local", "not-the-password")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign-in locked")
    expect(page.get_by_test_id("locked-out")).to_contain_text("You can try again in")
    expect(page.get_by_test_id("locked-out").locator("time")).to_contain_text("UTC")
    # During the wait even the right password is refused.
    sign_in(page, "maker@payops.local")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign-in locked")
    # The wait passes (the failures are moved back past it): the right password signs in.
    # (A maker: the journey is the lock's, not the second factor's.)
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=1))
    sign_in(page, "maker@payops.local")
    expect(page.get_by_role("heading", level=1)).to_have_text("Dashboard")


def test_an_idle_session_ends_on_the_sign_in_page_with_the_reason(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    sign_in(page, "maker@payops.local")
    expect(page.get_by_role("heading", level=1)).to_have_text("Dashboard")
    cookie = next(c for c in page.context.cookies() if c["name"] == settings.SESSION_COOKIE_NAME)
    session = SessionStore(session_key=cookie["value"])
    idle = timedelta(minutes=settings.PAYOPS_SESSION_IDLE_MINUTES + 1)
    session[LAST_SEEN_KEY] = (datetime.fromisoformat(session[LAST_SEEN_KEY]) - idle).isoformat()
    session.save()

    page.goto("/payouts/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")
    expect(page.get_by_text("minutes without activity")).to_be_visible()
