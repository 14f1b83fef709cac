"""The analytics page in Chromium: every figure's chart is drawn (a canvas Chart.js painted), the
Table button shows the same figures in a table, nothing overflows and no CSP violation or script
error is logged. Screenshots land in var/screenshots/ for a person to look at."""

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
FIGURES = ("volume", "outcomes", "completion", "fees", "balances", "budget")


def test_charts_draw_and_tables_toggle(
    page: Page,  # noqa: F811
    demo_staff: dict[str, StaffUser],  # noqa: F811
    sign_in: Callable[..., None],  # noqa: F811
    console_errors: list[str],  # noqa: F811
) -> None:
    environment = make_environment()
    build_october(environment)
    approver = demo_staff["finance_approver"]
    environment_switch(user=approver, environment=environment)
    page.set_viewport_size({"width": 1280, "height": 900})
    sign_in(page, approver.email)
    page.goto("/")
    page.get_by_test_id("analytics-link").click()
    response = page.goto("/analytics/?start=2026-10-01&end=2026-10-31")
    assert response is not None and response.status == 200
    for name in FIGURES:
        figure = page.get_by_test_id(f"figure-{name}")
        expect(figure.locator("canvas[data-chart-drawn=true]")).to_have_count(1)
        assert figure.locator("canvas").evaluate("c => c.width > 0 && c.height > 0")
        table = figure.get_by_test_id(f"table-{name}")
        expect(table).to_be_hidden()
        figure.get_by_role("button", name="Table").click()
        expect(table).to_be_visible()
    expect(page.get_by_test_id("table-balances")).to_contain_text("1115.25")
    expect(page.get_by_test_id("table-completion")).to_contain_text("1440.0")
    # Chart.js drew on the canvas: some pixel is not transparent.
    painted = page.evaluate(
        "() => { const c = document.querySelector('[data-testid=figure-volume] canvas');"
        " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " for (let i = 3; i < d.length; i += 4) { if (d[i] !== 0) return true; } return false; }"
    )
    assert painted
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "analytics-desk.png"), full_page=True)
    assert page_overflow(page) == 0
    assert console_errors == []
