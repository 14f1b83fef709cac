"""The OpenAPI page renders Swagger UI from our own static files under the strict CSP."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from staff.models import StaffUser

pytestmark = pytest.mark.browser


def test_api_docs_show_the_operations_without_csp_violations(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    sign_in(page, demo_staff["admin"].email)
    page.goto("/api/v1/docs")
    # Swagger UI lists each operation as a block with its path: the page is no longer blank.
    # (Swagger UI builds ~150 operations in the browser: give it longer than the default 5 s.)
    expect(page.locator(".opblock-summary-path").first).to_be_visible(timeout=30_000)
    expect(page.locator('.opblock-summary-path[data-path="/api/v1/me"]')).to_be_visible()
    assert [e for e in console_errors if "Content Security Policy" in e] == []
    origin = page.url.split("/api/")[0]
    assert all(url.startswith(origin) or url.startswith("data:") for url in requested), requested


def test_emulator_docs_show_the_operations_without_csp_violations(
    page: Page, console_errors: list[str]
) -> None:
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    from emulator.asgi import application
    from tests.servers import serve_in_thread

    # Static files as the emulator process serves them (WhiteNoise, or this handler in tests).
    with serve_in_thread(ASGIStaticFilesHandler(application), lifespan="off") as url:
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"{url}/sandbox/docs")
        expect(page.locator(".opblock-summary-path", has_text="/sandbox/auth")).to_be_visible()
    assert [e for e in console_errors if "Content Security Policy" in e] == []
    assert all(u.startswith(url) or u.startswith("data:") for u in requested), requested
