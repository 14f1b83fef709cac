"""Chromium journey: the demo's single admin publishes an approval policy; the page says it waits
for another admin (or the waiting period), the Changes page shows it with the count in the nav,
and its proposer withdraws it there."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from staff.models import StaffUser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_single_admins_policy_waits_on_the_changes_page_and_is_withdrawn(
    page: Page,
    sign_in: Callable[..., None],
    demo_staff: dict[str, StaffUser],
    console_errors: list[str],
) -> None:
    sign_in(page, demo_staff["admin"].email)
    page.goto("/payouts/approval-policy/")
    page.get_by_label("Rules").fill("10000 USD * * 2")
    page.get_by_test_id("publish").click()
    page.wait_for_load_state()
    expect(page.get_by_text("unless another admin decides")).to_be_visible()

    page.goto("/changes/")
    expect(page.get_by_test_id("nav-changes-pending")).to_have_text("1")
    row = page.get_by_test_id("changes-pending").get_by_role("row").nth(1)
    expect(row).to_contain_text("Publish approval policy version 1")
    expect(row).to_contain_text("applies at")
    row.get_by_test_id("withdraw").click()
    page.wait_for_load_state()
    expect(page.get_by_test_id("changes-history")).to_contain_text("Withdrawn")
    expect(page.get_by_test_id("nav-changes-pending")).to_have_count(0)
    assert console_errors == []
