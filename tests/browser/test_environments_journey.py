"""Chromium journey: an admin adds an emulator environment, tests it, switches; production warns."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, expect

from emulator.clients import client_create
from gateway.models import Environment, EnvironmentKind
from gateway.services.environments import (
    environment_create,
    environment_verification_record,
)
from staff.models import StaffUser
from tests.browser.axe import assert_accessible
from tests.servers import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def emulator_url(transactional_db: None) -> Iterator[str]:
    """The real emulator (its own ASGI app) served by uvicorn on a free port."""
    from emulator.asgi import application

    with serve_in_thread(application, lifespan="off") as url:
        yield url


def test_admin_adds_tests_and_switches_environments(
    emulator_url: str,
    page: Page,
    sign_in: Callable[..., None],
    demo_staff: dict[str, StaffUser],
    console_errors: list[str],
) -> None:
    issued = client_create(name="journey")
    environment_create(
        by=None,
        name="Default sandbox",
        kind=EnvironmentKind.SANDBOX,
        base_url="https://sandbox.example.test",
        client_id="c",
        password="p",
        api_key="k",
    )
    live = environment_create(
        by=None,
        name="Live payments",
        kind=EnvironmentKind.PRODUCTION,
        base_url="https://api.example.test",
        client_id="c",
        password="p",
        api_key="k",
    )
    # As if its connection test had passed (its credentials are not real ones here).
    environment_verification_record(environment=live, by=None, verified=True, reason="journey")
    sign_in(page, demo_staff["admin"].email)
    badge = page.get_by_test_id("env-badge")
    expect(badge).to_have_text("Default sandbox")

    page.goto("/gateway/environments/new/")
    assert_accessible(page)
    page.fill("input[name=name]", "Journey emulator")
    page.select_option("select[name=kind]", "sandbox")
    page.fill("input[name=base_url]", emulator_url)
    page.fill("input[name=client_id]", str(issued.client.client_id))
    page.fill("input[name=password]", issued.password)
    page.fill("input[name=api_key]", issued.api_key)
    page.click("form.form button[type=submit]")
    expect(page.locator(".message-success")).to_contain_text("Journey emulator added")
    assert_accessible(page)

    row = page.locator("tr[data-name='Journey emulator']")
    # Not verified yet: nobody may switch to it before its connection test passes.
    expect(row.get_by_test_id("unverified")).to_be_visible()
    expect(row.get_by_role("button", name="Switch to")).to_have_count(0)
    row.get_by_role("button", name="Test connection").click()
    expect(row.get_by_test_id("connection-result")).to_have_text(
        "Connected: token valid for 24 hours"
    )
    # The result was swapped in by htmx: still the same page, no navigation.
    assert page.url.endswith("/gateway/environments/")
    assert issued.api_key not in page.content()

    row.get_by_role("button", name="Switch to").click()
    expect(badge).to_have_text("Journey emulator")
    expect(badge).to_have_class("badge env-badge env-sandbox")

    expect(row.get_by_test_id("verified")).to_be_visible()
    page.locator("tr[data-name='Live payments']").get_by_role("button", name="Switch to").click()
    # Production asks first; nothing changed until the switch is confirmed.
    expect(page.get_by_test_id("production-warning")).to_be_visible()
    assert_accessible(page)
    expect(badge).to_have_text("Journey emulator")
    page.get_by_role("button", name="Yes, work in production").click()
    expect(badge).to_contain_text("PRODUCTION")
    expect(badge).to_have_class("badge env-badge env-production")
    expect(page.locator("body")).to_have_class("is-production")
    assert_accessible(page)  # the production look (its colours) passes too
    assert Environment.objects.get(name="Journey emulator").api_key == issued.api_key
    assert not [e for e in console_errors if "Content Security Policy" in e]
