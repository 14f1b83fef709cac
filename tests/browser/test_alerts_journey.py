"""Chromium journey of the alert pages: an alert fired by the real evaluator reaches a finance
maker's dashboard, who follows it to the history of open alerts and takes the rule in the daily
digest; an approver acknowledges it and the history names them; the auditor reads the history
without an acknowledge button. axe finds no serious or critical violation at any step.

The dashboard, the history, the rules and the subscriptions are shot at 1280 and 390 px into
var/screenshots/alerts/ (git-ignored) for a person to look at; at 1280 px every table fits its
container, at 390 px nothing overflows sideways, and a delivery choice is never cut off. Rules
are created with the service (the rule form is the admins' own page) and alerts come from their
real cause: an environment in use with no webhook receiver registered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from alerts.models import Alert, AlertRule, AlertState, AlertSubscription
from alerts.services import alerts_evaluate, rule_create
from gateway.models import Environment
from gateway.services.environments import environment_switch
from staff.models import StaffUser
from tests.browser.axe import assert_accessible
from tests.browser.test_lists import table_fits
from tests.browser.test_look import page_overflow
from tests.finance import make_environment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = Path(settings.BASE_DIR, "var", "screenshots", "alerts")


@dataclass(frozen=True)
class Fired:
    rule: AlertRule
    open: Alert  # the default sandbox has no receiver: open while that lasts
    resolved: Alert  # the second sandbox was in use for a while, then nobody worked in it


def fired_alerts(staff: dict[str, StaffUser]) -> Fired:
    """Three rules made by an admin (the service, as the API and the rule form call it), and the
    evaluator run twice: two environments in use without a webhook receiver fire two alerts; when
    nobody works in the second one any more, the next run resolves its alert."""
    default = make_environment("Main sandbox for the alert journey")
    second = make_environment("Second sandbox with a rather long name for a narrow screen")
    admin = staff["admin"]
    rule = rule_create(
        by=admin,
        name="Environments without a webhook receiver",
        kind="webhook_receiver",
        thresholds={},
        environment=None,
        severity="critical",
    )
    rule_create(
        by=admin,
        name="Payouts stuck while submitting",
        kind="payout_submitting",
        thresholds={"minutes": 15},
        environment=default,
        webhook_url="https://hooks.example.com/services/T0001/B0002/a-very-secret-token-9f3c",
    )
    rule_create(
        by=admin,
        name="Repeated sign-in failures",
        kind="sign_in_failures",
        thresholds={"failures": 5},
        environment=None,
        severity="info",
        enabled=False,
    )
    compliance = staff["compliance"]
    environment_switch(user=compliance, environment=second)
    earlier = timezone.now() - timedelta(minutes=30)
    assert alerts_evaluate(now=earlier)["fired"] == 2
    environment_switch(user=compliance, environment=default)
    assert alerts_evaluate(now=earlier + timedelta(minutes=1))["resolved"] == 1
    return Fired(
        rule=rule,
        open=_alert_of(rule, default, AlertState.OPEN),
        resolved=_alert_of(rule, second, AlertState.RESOLVED),
    )


def _alert_of(rule: AlertRule, environment: Environment, state: str) -> Alert:
    return Alert.objects.get(rule=rule, subject=f"environment:{environment.pk}", state=state)


@pytest.fixture
def open_page(
    browser: Browser,
    live_server,
    console_errors: list[str],  # type: ignore[no-untyped-def]
) -> Iterator[Callable[[], Page]]:
    """Another person's browser (its own cookies) on the live server, as many as asked for."""
    contexts = []

    def new() -> Page:
        context = browser.new_context(base_url=live_server.url)
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
        return page

    try:
        yield new
    finally:
        for context in contexts:
            context.close()


def shoot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    width = page.viewport_size["width"] if page.viewport_size else 0
    page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=True)


def clipped_choices(page: Page) -> list[str]:
    """The <select>s of the main content narrower than their own longest option (a copy of each,
    unconstrained, measures it): their chosen value would be cut off."""
    return page.evaluate(
        """() => [...document.querySelectorAll('main select')].filter(select => {
            const copy = select.cloneNode(true);
            copy.removeAttribute('id');
            copy.style.cssText = 'position:absolute;visibility:hidden;width:auto;flex:none';
            select.parentElement.appendChild(copy);
            const natural = copy.getBoundingClientRect().width;
            copy.remove();
            return select.getBoundingClientRect().width + 0.5 < natural;
        }).map(select => select.id || select.name)"""
    )


def at_both_widths(page: Page, path: str, name: str) -> None:
    """The page at 1280 and 390 px: shot at each, accessible at each; on a desktop every table
    fits its container (nothing to scroll to), on a phone nothing scrolls sideways. The viewport
    goes back to the desktop."""
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        response = page.goto(path)
        assert response is not None and response.status == 200, path
        shoot(page, name)
        assert_accessible(page, f"{name} at {size['width']} px")
        if size is DESKTOP:
            assert table_fits(page) == [], f"{name}: a table sticks out at 1280 px"
        else:
            assert page_overflow(page) == 0, f"{name} overflows at 390 px"
    page.set_viewport_size(DESKTOP)


def test_an_alert_reaches_the_dashboard_is_followed_subscribed_and_acknowledged(
    page: Page,
    open_page: Callable[[], Page],
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
) -> None:
    fired = fired_alerts(demo_staff)
    maker = demo_staff["finance_maker"]
    open_row = f"tr[data-alert='{fired.open.pk}']"
    resolved_row = f"tr[data-alert='{fired.resolved.pk}']"

    # The maker starts on the dashboard: one alert open, its summary in the Alerts panel.
    page.set_viewport_size(DESKTOP)
    sign_in(page, maker.email)
    page.goto("/")
    panel = page.get_by_test_id("open-alerts")
    expect(panel.get_by_test_id("open-alert-count")).to_have_text(
        "1 alert is open: its condition still holds."
    )
    expect(panel.get_by_test_id("open-alert")).to_have_count(1)
    expect(panel.get_by_test_id("open-alert")).to_contain_text(fired.open.summary)
    expect(panel.get_by_test_id("open-alert")).to_contain_text("Critical")
    # The dashboard frames each panel once: the panel itself draws no second frame inside.
    expect(page.locator("[data-panel] .panel")).to_have_count(0)
    assert_accessible(page, "the maker's dashboard")
    at_both_widths(page, "/", "dashboard")

    # The panel's link opens the history filtered on open alerts: the resolved one is not listed.
    page.get_by_test_id("open-alerts").get_by_role("link", name="Open the alert history").click()
    expect(page).to_have_url(re.compile(r"/alerts/\?state=open$"))
    expect(page.get_by_role("heading", name="Alert history")).to_be_visible()
    expect(page.get_by_label("State")).to_have_value("open")
    expect(page.locator(open_row)).to_contain_text(fired.open.summary)
    expect(page.locator(open_row)).to_contain_text("Main sandbox for the alert journey")
    expect(page.locator(resolved_row)).to_have_count(0)
    expect(page.get_by_text("1 alert", exact=True)).to_be_visible()
    # A maker may acknowledge; this one leaves it to the approver.
    expect(page.locator(open_row).get_by_test_id("acknowledge")).to_be_visible()
    assert_accessible(page, "the history of open alerts")
    at_both_widths(page, "/alerts/", "history")  # every alert, the resolved one too
    # Resolved reads as good news, open as trouble.
    expect(page.locator(resolved_row).locator(".badge-ok")).to_have_text("Resolved")
    expect(page.locator(open_row).locator(".badge-error").last).to_have_text("Open")

    # My subscriptions: the rule in the daily digest, saved and shown as chosen.
    page.get_by_role("main").get_by_role("link", name="My subscriptions").click()
    expect(page.get_by_role("heading", name="My alert subscriptions")).to_be_visible()
    row = page.locator(f"tr[data-rule='{fired.rule.pk}']")
    choice = row.get_by_label(f"Delivery of {fired.rule.name}")
    expect(choice).to_have_value("")
    box = choice.bounding_box()  # the choice is a field as everywhere, not a tiny bare control
    assert box is not None and box["height"] >= 24, box
    assert_accessible(page, "my subscriptions")
    choice.select_option(label="In a daily digest")
    row.get_by_test_id("subscription-save").click()
    expect(page.get_by_role("status")).to_contain_text(
        f"Your choice for “{fired.rule.name}” is saved."
    )
    expect(
        page.locator(f"tr[data-rule='{fired.rule.pk}']").get_by_label(
            f"Delivery of {fired.rule.name}"
        )
    ).to_have_value("digest")
    assert AlertSubscription.objects.get(user=maker, rule=fired.rule).mode == "digest"
    # Only enabled rules are offered: the disabled one is on the rules page, not here.
    expect(page.get_by_test_id("subscriptions").locator("tbody tr")).to_have_count(2)
    assert_accessible(page, "my subscriptions, saved")
    at_both_widths(page, "/alerts/subscriptions/", "subscriptions")
    for size in (DESKTOP, PHONE):  # each choice reads whole, on a desktop and on a phone
        page.set_viewport_size(size)
        page.goto("/alerts/subscriptions/")
        assert clipped_choices(page) == [], size
    page.set_viewport_size(DESKTOP)

    # The rules as the maker reads them: no new rule, no edit, no enable or disable.
    page.goto("/alerts/rules/")
    expect(page.get_by_test_id("rules").locator("tbody tr")).to_have_count(3)
    expect(page.get_by_test_id("rule-new")).to_have_count(0)
    expect(page.get_by_test_id("rule-toggle")).to_have_count(0)
    # Thresholds by their label, never by the name they are stored under.
    rules = page.get_by_test_id("rules")
    expect(rules).to_contain_text("Minutes in submitting: 15")
    expect(rules).to_contain_text("Failures at least: 5")
    expect(rules).not_to_contain_text("minutes:")
    expect(rules.locator(".badge-info")).to_have_text("Info")  # an info rule is no error
    assert_accessible(page, "the rules as a maker")

    # The approver acknowledges the open alert on the history; the row names them.
    approver = demo_staff["finance_approver"]
    approver_page = open_page()
    sign_in(approver_page, approver.email)
    approver_page.goto("/alerts/?state=open")
    assert_accessible(approver_page, "the approver's history")
    approver_page.locator(open_row).get_by_test_id("acknowledge").click()
    expect(approver_page.get_by_role("status")).to_contain_text("Alert acknowledged.")
    acknowledged = approver_page.locator(open_row)
    expect(acknowledged).to_contain_text(approver.email)
    expect(acknowledged.get_by_test_id("acknowledge")).to_have_count(0)
    expect(acknowledged).to_contain_text("Open")  # seen, and still open while it lasts
    assert_accessible(approver_page, "the history, acknowledged")
    fired.open.refresh_from_db()
    assert fired.open.acknowledged_by == approver and fired.open.state == AlertState.OPEN

    # The auditor reads the whole history, who acknowledged what, and has nothing to press.
    auditor_page = open_page()
    sign_in(auditor_page, demo_staff["auditor"].email)
    auditor_page.goto("/alerts/")
    expect(auditor_page.locator(open_row)).to_contain_text(approver.email)
    expect(auditor_page.locator(resolved_row)).to_contain_text("Resolved")
    expect(auditor_page.locator(resolved_row).locator("td").last).to_have_text("—")
    expect(auditor_page.get_by_test_id("acknowledge")).to_have_count(0)
    assert_accessible(auditor_page, "the auditor's history")

    # The rules page as an admin reads it (its edit links and enable/disable buttons), both widths.
    admin_page = open_page()
    sign_in(admin_page, demo_staff["admin"].email)
    at_both_widths(admin_page, "/alerts/rules/", "rules")
    expect(admin_page.get_by_test_id("rule-toggle")).to_have_count(3)
    expect(admin_page.get_by_text("https://hooks.example.com/…9f3c")).to_be_visible()
    assert "a-very-secret-token" not in admin_page.content()

    assert console_errors == [], console_errors
