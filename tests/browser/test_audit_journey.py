"""The auditor's journey through the audit trail in a browser (issue 20 item 4): sign in with
the second factor, filter the trail, open an entry's before/after diff, verify the chain. No CSP
violation (the page fixture fails on one); screenshots go to var/screenshots/ for a person."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from staff.audit import audit_record
from staff.models import StaffUser
from tests.browser.axe import assert_accessible
from tests.browser.test_look import page_overflow

pytestmark = pytest.mark.browser


def test_an_auditor_filters_the_trail_reads_a_diff_and_verifies_the_chain(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    admin = demo_staff["admin"]
    entry = audit_record(
        actor=admin,
        action="environment.updated",
        target=admin,
        details={"credentials_replaced": ["password"]},
        before={"base_url": "https://old.example", "rate_per_second": 5, "password": "a"},
        after={"base_url": "https://new.example", "rate_per_second": 5, "password": "b"},
    )
    page.set_viewport_size({"width": 1280, "height": 800})
    sign_in(page, "auditor@payops.local")
    page.get_by_role("link", name="Audit trail").first.click()
    expect(page.get_by_role("heading", name="Audit trail")).to_be_visible()
    page.get_by_label("Action starts with").fill("environment.")
    page.get_by_role("button", name="Filter").click()
    row = page.locator(f'tr[data-entry="{entry.pk}"]')
    expect(row).to_be_visible()
    expect(page.locator("tr[data-entry]")).to_have_count(1)
    assert_accessible(page)
    assert page_overflow(page) == 0
    shots = Path(settings.BASE_DIR) / "var" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "audit-list-1280.png"), full_page=True)
    row.get_by_role("link", name="base_url").click()
    diff = page.get_by_test_id("audit-diff")
    expect(diff.locator('tr[data-key="base_url"]')).to_contain_text("https://new.example")
    expect(page.get_by_test_id("audit-unchanged")).to_contain_text("2 unchanged fields")
    assert_accessible(page)
    page.screenshot(path=str(shots / "audit-entry-1280.png"), full_page=True)
    page.get_by_role("link", name="Audit trail").first.click()
    page.get_by_role("link", name="Verify the chain").click()
    expect(page.get_by_test_id("chain-ok")).to_be_visible()
    assert_accessible(page)
