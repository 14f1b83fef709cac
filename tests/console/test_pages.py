"""Navigation by permission, 403/404/500 pages, placeholders, system health, CSP-safe markup."""

from __future__ import annotations

import re

import pytest
from django.test import Client, RequestFactory

from console.navigation import ITEMS_BY_KEY
from console.views import server_error
from staff.models import StaffUser

pytestmark = pytest.mark.django_db

# The books: finance reads and resolves, the auditor reads (superuser admins see everything).
BOOKS = {"reconciliation", "exceptions", "statements", "fees-report", "analytics"}
# Alerts: every role reads the history and chooses its subscriptions; admins keep the rules.
ALERTS = {"alerts", "alert-subscriptions"}
EXPECTED_NAV = {
    "finance_maker": {"dashboard", "quotes", "payouts", "end-users", "accounts", "recipients"}
    | BOOKS
    | ALERTS,
    # Approvers and compliance follow upstream events (webhooks.view_webhook_events).
    "finance_approver": {
        "dashboard",
        "quotes",
        "payouts",
        "approvals",
        "end-users",
        "accounts",
        "recipients",
        "webhooks",
    }
    | BOOKS
    | ALERTS,
    "compliance": {
        "dashboard",
        "payouts",
        "end-users",
        "kyc-review",
        "accounts",
        "recipients",
        "webhooks",
    }
    | ALERTS,
    # Reads everything, changes nothing (tests/staff/test_auditor.py walks every page and API).
    "auditor": {
        "dashboard",
        "quotes",
        "payouts",
        "end-users",
        "accounts",
        "recipients",
        "call-log",
        "webhooks",
        "system-health",
        "audit",
    }
    | BOOKS
    | ALERTS,
    # The demo admin is a superuser, so every item shows (see docs/staff.md).
    "admin": {
        "dashboard",
        "quotes",
        "payouts",
        "approvals",
        "end-users",
        "kyc-review",
        "accounts",
        "recipients",
        "environments",
        "approval-policy",
        "changes",
        "call-log",
        "webhooks",
        "system-health",
        "audit",
        "django-admin",
        "alert-rules",
    }
    | BOOKS
    | ALERTS,
}


def nav_keys(html: str) -> set[str]:
    nav = html.split('<nav class="sidebar"', 1)[1].split("</nav>", 1)[0]
    return set(re.findall(r'data-nav="([^"]+)"', nav))


@pytest.mark.parametrize("role", sorted(EXPECTED_NAV))
def test_each_role_sees_exactly_its_navigation(client_for, role: str) -> None:  # type: ignore[no-untyped-def]
    html = client_for(role).get("/").content.decode()
    assert nav_keys(html) == EXPECTED_NAV[role]


def test_navigation_follows_permissions_not_role_names(db: None) -> None:
    from django.contrib.auth.models import Permission

    user = StaffUser.objects.create_user("custom@payops.local", "x")
    user.user_permissions.add(Permission.objects.get(codename="view_system_health"))
    client = Client()
    client.force_login(user)
    assert nav_keys(client.get("/").content.decode()) == {"dashboard", "system-health"}
    assert client.get("/system/health/").status_code == 200


def test_dashboard_shows_the_cards_of_the_users_role(client_for) -> None:  # type: ignore[no-untyped-def]
    html = client_for("finance_approver").get("/").content.decode()
    assert 'data-role="finance_approver"' in html
    assert "Approve or reject them with a reason" in html
    assert 'data-role="finance_maker"' not in html


def test_a_user_without_a_role_is_told_so(db: None) -> None:
    client = Client()
    client.force_login(StaffUser.objects.create_user("new@payops.local", "x"))
    html = client.get("/").content.decode()
    assert "No role yet" in html
    assert nav_keys(html) == {"dashboard"}


@pytest.mark.parametrize(
    ("role", "nav_key"),
    [
        ("finance_maker", "system-health"),
        ("finance_maker", "end-users"),
        ("finance_approver", "accounts"),
        ("compliance", "quotes"),
        ("compliance", "system-health"),
    ],
)
def test_pages_of_another_role_are_refused(client_for, role: str, nav_key: str) -> None:  # type: ignore[no-untyped-def]
    response = client_for(role).get(ITEMS_BY_KEY[nav_key].url)
    assert response.status_code == 403
    html = response.content.decode()
    assert "You don't have permission to see this page" in html
    assert 'data-testid="forbidden"' in html
    # The 403 page keeps the shell: navigation and sign-out.
    assert nav_keys(html) == EXPECTED_NAV[role]


def test_the_django_admin_sends_non_staff_to_its_own_login(client_for) -> None:  # type: ignore[no-untyped-def]
    response = client_for("compliance").get("/admin/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_the_403_page_names_the_users_role(client_for) -> None:  # type: ignore[no-untyped-def]
    html = client_for("compliance").get(ITEMS_BY_KEY["quotes"].url).content.decode()
    assert "<strong>Compliance</strong>" in html


@pytest.mark.parametrize("nav_key", sorted(ITEMS_BY_KEY))
def test_missing_features_get_a_placeholder_and_built_ones_do_not(client_for, nav_key: str) -> None:  # type: ignore[no-untyped-def]
    item = ITEMS_BY_KEY[nav_key]
    response = client_for("admin").get(f"/soon/{nav_key}/")
    if item.is_placeholder:
        assert item.url == f"/soon/{nav_key}/"
        assert response.status_code == 200
        assert "Coming in a later issue." in response.content.decode()
    else:
        assert not item.url.startswith("/soon/")
        assert response.status_code == 404


def test_an_unknown_placeholder_is_a_404_page_without_details(client_for) -> None:  # type: ignore[no-untyped-def]
    response = client_for("admin").get("/soon/teleportation/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Page not found" in html
    assert "Traceback" not in html


def test_system_health_shows_the_readiness_report(client_for) -> None:  # type: ignore[no-untyped-def]
    response = client_for("admin").get("/system/health/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>System health</h1>" in html
    assert 'data-testid="overall-status"' in html
    assert 'hx-get="/system/health/"' in html


def test_system_health_lists_every_check_of_readyz(client_for) -> None:  # type: ignore[no-untyped-def]
    client = client_for("admin")
    probe = client.get("/readyz")
    report = probe.json()
    html = client.get("/system/health/").content.decode()
    from console.health import CHECKS

    for name in report.get("checks", {}):
        # Each check by its label (issue 30: words, not the /readyz key `channel_layer`).
        assert f"<td>{CHECKS[name].label}</td>" in html and f"<td>{name}</td>" not in html
    expected = "badge-ok" if probe.status_code == 200 else "badge-error"
    if probe.status_code == 200 and report["warnings"]:
        expected = "badge-warning"
    assert f'class="badge {expected}" data-testid="overall-status"' in html


def test_system_health_shows_durations_as_a_person_reads_them(client_for) -> None:  # type: ignore[no-untyped-def]
    html = client_for("admin").get("/system/health/").content.decode()
    assert "duration_ms" not in html and "age_seconds" not in html
    took = html.split('data-testid="check-took">')[1].split("<")[0]
    assert took.endswith((" ms", " s")), took


def test_a_check_row_labels_its_figures_in_words() -> None:
    from console.views import health_row

    row = health_row(
        "worker", {"status": "ok", "duration_ms": 1234.5, "age_seconds": 3.2, "cluster": "q"}
    )
    assert (row["status"], row["took"]) == ("ok", "1.2 s")
    assert row["details"] == [("Age", "3.2 s"), ("Worker cluster", "q")]
    assert health_row("cache", {"status": "fail", "age_seconds": None})["details"] == [("Age", "—")]


def test_system_health_answers_htmx_with_only_the_fragment(client_for) -> None:  # type: ignore[no-untyped-def]
    response = client_for("admin").get("/system/health/", headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="health-checks"')
    assert "<html" not in html
    assert "<h1>" not in html


def test_the_500_handler_renders_without_request_context() -> None:
    page = server_error(RequestFactory().get("/anything/"))
    assert page.status_code == 500
    html = page.content.decode()
    assert "Something went wrong" in html
    assert "Traceback" not in html


@pytest.mark.urls("tests.console.boom_urls")
def test_an_exception_in_a_view_renders_our_500_page(db: None) -> None:
    response = Client(raise_request_exception=False).get("/boom/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong" in html
    assert "division by zero" not in html


@pytest.mark.parametrize(
    "url", ["/", "/system/health/", "/soon/quotes/", "/password/", "/nowhere/"]
)
def test_pages_have_no_inline_script_or_style(client_for, url: str) -> None:  # type: ignore[no-untyped-def]
    response = client_for("admin").get(url)
    assert response.status_code in {200, 404}
    html = response.content.decode()
    assert "Content-Security-Policy" in response.headers
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    for match in re.finditer(r"<script\b[^>]*>", html):
        assert "src=" in match.group(0)
    assert "<style" not in html
    assert " style=" not in html
    assert re.search(r"\son[a-z]+=", html) is None  # no inline event handlers
    assert '<script src="/static/vendor/htmx/htmx.min.js" defer></script>' in html
    assert """hx-headers='{"X-CSRFToken": \"""" in html
    assert '"includeIndicatorStyles": false' in html


def test_the_login_page_is_csp_safe_too() -> None:
    html = Client().get("/login/").content.decode()
    assert "<style" not in html and " style=" not in html


def test_static_assets_exist() -> None:
    from django.contrib.staticfiles import finders

    assert finders.find("vendor/htmx/htmx.min.js")
    assert finders.find("css/payops.css")
