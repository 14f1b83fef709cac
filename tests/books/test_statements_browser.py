"""The statements page and the fees and FX report in Chromium, on a desk and a phone: they show
the statement and the report, nothing overflows, no CSP violation. Screenshots land in
var/screenshots/ for a person to look at."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from gateway.services.environments import environment_switch
from staff.models import StaffUser
from tests.books.statement_fixtures import build_october
from tests.browser.conftest import browser, console_errors, demo_staff, page, sign_in  # noqa: F401
from tests.browser.test_look import page_overflow
from tests.finance import make_environment

pytestmark = pytest.mark.browser

SCREENSHOTS = Path("var/screenshots")
SIZES = {"desk": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
PERIOD = "start=2026-10-01&end=2026-10-31"


@pytest.mark.parametrize("size", SIZES)
def test_statement_and_fees_pages_fit(
    page: Page,  # noqa: F811
    demo_staff: dict[str, StaffUser],  # noqa: F811
    sign_in: Callable[..., None],  # noqa: F811
    console_errors: list[str],  # noqa: F811
    size: str,
) -> None:
    environment = make_environment()
    october = build_october(environment)
    auditor = demo_staff["auditor"]
    environment_switch(user=auditor, environment=environment)
    page.set_viewport_size(SIZES[size])
    sign_in(page, auditor.email)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name, path, shows in (
        (
            "statement",
            f"/books/statements/?account={october.account.pk}&{PERIOD}&on=2026-10-03",
            "1,115.25 USD",
        ),
        ("fees-report", f"/books/fees/?{PERIOD}", "USD→MXN MX SWIFT"),
    ):
        response = page.goto(path)
        assert response is not None and response.status == 200
        expect(page.locator("main, #main").first).to_contain_text(shows)
        page.screenshot(path=str(SCREENSHOTS / f"books-{name}-{size}.png"), full_page=True)
        assert page_overflow(page) == 0, name
        if size == "desk":  # the statement's columns fit a desk without scrolling sideways
            hidden = page.evaluate(
                "[...document.querySelectorAll('[data-testid=statement-lines]')]"
                ".map(t => t.parentElement.scrollWidth - t.parentElement.clientWidth)"
            )
            assert all(width <= 0 for width in hidden), hidden
    assert console_errors == []
