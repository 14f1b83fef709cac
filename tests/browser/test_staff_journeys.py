"""Each demo role signs in, sees its own navigation, is refused another role's page, signs out."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from console.navigation import ITEMS_BY_KEY
from staff.models import StaffUser
from tests.browser.axe import assert_accessible
from tests.browser.conftest import authenticator_code

pytestmark = pytest.mark.browser

# The Books section follows Finance: finance reads and works it (superuser admins see it too).
BOOKS = ["reconciliation", "exceptions", "statements", "fees-report", "analytics"]
# The Alerts section follows Directory: every role reads and subscribes; admins keep the rules.
ALERTS = ["alerts", "alert-subscriptions"]
EXPECTED_NAV = {
    "finance_maker": [
        "dashboard",
        "quotes",
        "payouts",
        *BOOKS,
        "end-users",
        "accounts",
        "recipients",
        *ALERTS,
    ],
    "finance_approver": [
        "dashboard",
        "quotes",
        "payouts",
        "approvals",
        *BOOKS,
        "end-users",
        "accounts",
        "recipients",
        *ALERTS,
        "webhooks",
    ],
    "compliance": [
        "dashboard",
        "payouts",
        "end-users",
        "kyc-review",
        "accounts",
        "recipients",
        *ALERTS,
        "webhooks",
    ],
    # The demo admin is a Django superuser: every item shows.
    "admin": [
        "dashboard",
        "quotes",
        "payouts",
        "approvals",
        *BOOKS,
        "end-users",
        "kyc-review",
        "accounts",
        "recipients",
        *ALERTS,
        "alert-rules",
        "environments",
        "approval-policy",
        "changes",
        "call-log",
        "webhooks",
        "system-health",
        "audit",
        "django-admin",
    ],
}
# A page of another role that each role must be refused.
FORBIDDEN_PAGE = {
    # Makers read end users (they pay out to them): refused environments instead.
    "finance_maker": "environments",
    "finance_approver": "system-health",
    "compliance": "quotes",  # compliance reads payouts, not quotes
}


def nav_keys(page: Page) -> list[str]:
    return page.locator("nav.sidebar a[data-nav]").evaluate_all(
        "links => links.map(a => a.dataset.nav)"
    )


@pytest.mark.parametrize("role", list(EXPECTED_NAV))
def test_role_journey(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
    role: str,
) -> None:
    user = demo_staff[role]
    sign_in(page, user.email)

    assert page.url.endswith("/") and page.url.count("/") == 3  # the dashboard, at the root
    expect(page.get_by_role("heading", level=1)).to_have_text("Dashboard")
    expect(page.get_by_test_id("user-email")).to_have_text(user.email)
    assert nav_keys(page) == EXPECTED_NAV[role]
    assert page.evaluate("window.htmx && window.htmx.version").startswith("2.")
    assert_accessible(page)

    if role in FORBIDDEN_PAGE:
        response = page.goto(ITEMS_BY_KEY[FORBIDDEN_PAGE[role]].url)
        assert response is not None and response.status == 403
        expect(page.get_by_role("heading", level=1)).to_have_text(
            "You don't have permission to see this page"
        )
        expect(page.get_by_test_id("forbidden")).to_contain_text(user.email)
        assert_accessible(page)
    else:
        page.get_by_role("navigation", name="Main").get_by_role(
            "link", name="System health"
        ).click()
        expect(page.get_by_role("heading", level=1)).to_have_text("System health")
        expect(page.get_by_test_id("overall-status")).to_be_visible()
        assert_accessible(page)
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Django admin").click()
        expect(page.locator("#site-name")).to_contain_text("PayOps administration")
        page.get_by_role("link", name="Back office").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Dashboard")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")
    expect(page.get_by_text("You have signed out.")).to_be_visible()
    assert_accessible(page)
    page.goto("/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")

    csp_violations = [e for e in console_errors if "Content Security Policy" in e]
    assert csp_violations == []


def test_wrong_password_shows_the_message(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    sign_in(page, "maker@payops.local", "not-the-password")
    expect(page.get_by_test_id("login-error")).to_contain_text("Wrong email or password.")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")


def test_sign_in_returns_to_the_page_asked_for(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    page.goto("/system/health/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")
    page.get_by_label("Email").fill("admin@payops.local")
    page.get_by_label("Password").fill("payops-demo")
    page.get_by_role("button", name="Sign in").click()
    # The admin's role needs a second factor: the page asked for survives the second step too.
    expect(page.get_by_role("heading", level=1)).to_have_text("Confirm it is you")
    assert_accessible(page)
    page.get_by_label("Code").fill(authenticator_code("admin@payops.local"))
    page.get_by_role("button", name="Verify").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("System health")
    assert page.url.endswith("/system/health/")
