"""Layout in Chromium at a phone's width: nothing overflows the page; list tables become cards."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone
from playwright.sync_api import Page, expect

from gateway.models import UpstreamCall
from gateway.services.environments import environment_create
from staff.models import StaffUser

pytestmark = pytest.mark.browser

NARROW = {"width": 360, "height": 740}


def page_overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than the viewport (0: no horizontal scrolling)."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )


@pytest.mark.parametrize("path", ["/", "/gateway/environments/", "/gateway/calls/"])
def test_no_horizontal_overflow_at_a_narrow_width(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None], path: str
) -> None:
    environment = environment_create(
        by=None,
        name="A sandbox with a rather long name for a narrow screen",
        kind="sandbox",
        base_url="https://a-very-long-host-name.sandbox-upstream.example.test",
        client_id="client-id-0000",
        password="password-0000",
        api_key="api-key-0000-0000",
    )
    UpstreamCall.objects.bulk_create(
        UpstreamCall(
            environment=environment,
            operation="quotation_create",
            method="POST",
            path=f"/v1/quotations/{'x' * 40}/{i}",
            status=201,
            duration_ms=1234,
            created_at=timezone.now(),
        )
        for i in range(3)
    )
    page.set_viewport_size(NARROW)
    sign_in(page, demo_staff["admin"].email)
    page.goto(path)
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    assert page_overflow(page) == 0
    topbar = page.locator("header.topbar")
    assert topbar.evaluate("el => el.scrollWidth - el.clientWidth") == 0
    box = topbar.bounding_box()
    assert box is not None and box["x"] >= 0 and box["width"] <= NARROW["width"]
    if path != "/":
        # The table has more columns than a phone can show: its rows are cards that fit.
        scroller = page.locator(".table-scroll").first
        assert scroller.evaluate("el => el.scrollWidth <= el.clientWidth")
        assert (
            page.locator("main table.table tbody tr").first.evaluate(
                "el => getComputedStyle(el).display"
            )
            == "block"
        )


def test_countdown_ticks_and_announces_expiry(page: Page) -> None:
    script = Path(settings.BASE_DIR, "static", "js", "countdown.js").read_text()
    page.set_content(
        '<time id="soon" data-countdown data-expired-text="quote expired">…</time>'
        '<time id="later" data-countdown>…</time>'
    )
    page.evaluate(
        """() => {
            const at = (id, ms) => document.getElementById(id)
                .setAttribute('datetime', new Date(Date.now() + ms).toISOString());
            at('soon', 1500);
            at('later', 3725000);
            window.expired = [];
            document.addEventListener('countdown:expired', e => window.expired.push(e.target.id));
        }"""
    )
    page.add_script_tag(content=script)
    expect(page.locator("#later")).to_have_text("1:02:04")
    expect(page.locator("#soon")).to_have_text("quote expired", timeout=5_000)
    expect(page.locator("#soon")).to_have_class("countdown-expired")
    assert page.evaluate("window.expired") == ["soon"]


def test_call_log_filter_bar_swaps_the_results_and_keeps_the_url(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    environment = environment_create(
        by=None,
        name="Filtered",
        kind="sandbox",
        base_url="https://api.example.test",
        client_id="c",
        password="p",
        api_key="k",
    )
    UpstreamCall.objects.bulk_create(
        UpstreamCall(environment=environment, method="GET", path=path, status=200)
        for path in ("/v1/quotations/1", "/v1/users/2")
    )
    sign_in(page, demo_staff["admin"].email)
    page.goto("/gateway/calls/")
    expect(page.locator("#call-log-results tbody tr")).to_have_count(2)
    page.get_by_label("Path contains").fill("users")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#call-log-results tbody tr")).to_have_count(1)
    expect(page.locator("#call-log-results tbody")).to_contain_text("/v1/users/2")
    assert "path=users" in page.url
    # Swapped in place: one filter bar, one results block.
    expect(page.locator("form.filter-bar")).to_have_count(1)
    expect(page.locator("#call-log-results")).to_have_count(1)
