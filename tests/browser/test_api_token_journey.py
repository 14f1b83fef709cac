"""Personal API tokens on the profile page: scopes and expiry chosen, listed, used; a privileged
token sends the person to step-up first. Strict CSP holds (the page fixture fails otherwise)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from staff.models import StaffUser

pytestmark = pytest.mark.browser


def test_a_maker_creates_a_scoped_token_and_uses_it(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    sign_in(page, demo_staff["finance_maker"].email)
    page.goto("/profile/")
    form = page.get_by_test_id("token-form")
    expect(form.get_by_label("Read", exact=False)).to_be_checked()
    expect(form.get_by_label("Prepare", exact=False)).to_be_checked()
    # A maker's token could approve nothing: the scope is not offered.
    expect(form.locator('input[value="approve"]')).to_have_count(0)
    form.get_by_label("Prepare", exact=False).uncheck()
    form.get_by_label("Name").fill("finance ERP")
    form.get_by_label("Expires after").select_option("7")
    form.get_by_role("button", name="Create token").click()

    token = page.get_by_test_id("new-token-value").inner_text()
    row = page.get_by_test_id("token-row").filter(has_text="finance ERP")
    expect(row).to_contain_text("read")
    expect(row).not_to_contain_text("prepare")
    expect(row.get_by_test_id("token-status")).to_have_text("Active")
    page.screenshot(path="var/screenshots/profile-api-token.png", full_page=True)

    me = page.request.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status == 200 and me.json()["token_scopes"] == ["read"]
    write = page.request.post(
        "/api/v1/quotes", headers={"Authorization": f"Bearer {token}"}, data="{}"
    )
    assert write.status == 403


def test_an_approve_token_asks_for_step_up_first(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None], settings: Any
) -> None:
    # Whatever second factor sign-in verified is already too old: step-up is always due.
    settings.PAYOPS_STEP_UP_MINUTES = 0
    sign_in(page, demo_staff["finance_approver"].email)
    page.goto("/profile/")
    form = page.get_by_test_id("token-form")
    form.get_by_label("Name").fill("release bot")
    # An approver prepares nothing to pay, but works reconciliation exceptions (books.reconcile).
    expect(form.locator('input[value="prepare"]')).to_have_count(1)
    form.get_by_label("Read", exact=False).uncheck()
    form.get_by_label("Approve", exact=False).check()
    form.get_by_role("button", name="Create token").click()
    expect(page.get_by_test_id("new-token")).to_have_count(0)
    expect(page.get_by_test_id("token-step-up")).to_be_visible()
    expect(page.get_by_test_id("token-row")).to_have_count(0)
    page.screenshot(path="var/screenshots/profile-api-token-step-up.png", full_page=True)
