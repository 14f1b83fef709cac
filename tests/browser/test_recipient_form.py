"""The recipient form shows only the fields of the chosen kind and transfer, under the CSP."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from gateway.services.environments import environment_switch
from staff.models import StaffUser
from tests.finance import make_end_user, make_environment

pytestmark = pytest.mark.browser


def test_each_account_type_shows_only_its_own_fields(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    maker = demo_staff["finance_maker"]
    environment = make_environment()
    environment_switch(user=maker, environment=environment)
    make_end_user(environment)
    sign_in(page, maker.email)
    page.goto("/accounts/recipients/new/")
    routing = page.locator('[data-field="routing_number"]')
    swift = page.locator('[data-field="swift_code"]')
    account = page.locator('[data-field="account_number"]')

    # WIRE is the initial choice: account and routing number, no BIC.
    expect(routing).to_be_visible()
    expect(swift).to_be_hidden()
    page.get_by_label("Bank transfer").select_option("SWIFT")
    expect(swift).to_be_visible()
    expect(routing).to_be_hidden()
    expect(account).to_be_visible()
    page.get_by_label("Bank transfer").select_option("WIRE")
    expect(routing).to_be_visible()
    expect(swift).to_be_hidden()

    company = page.locator('[data-field="company_name"]')
    first = page.locator('[data-field="first_name"]')
    expect(company).to_be_hidden()
    page.get_by_label("Company", exact=True).check()
    expect(company).to_be_visible()
    expect(first).to_be_hidden()
    page.get_by_label("Bank transfer").select_option("SWIFT")
    page.screenshot(path="var/screenshots/recipient-form-swift-company.png", full_page=True)
