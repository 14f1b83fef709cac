"""Browser journeys: headless Chromium through Playwright's sync API against a live server.

Playwright's sync API keeps an asyncio event loop running in the test thread while it is alive, so
Django's ORM would raise SynchronousOnlyOperation in fixtures and tests that touch the database.
`browser` therefore allows async-unsafe calls for exactly as long as Playwright runs (one test
module), then restores the environment. The browser tests are plain sync functions, so
pytest-asyncio's auto mode leaves them alone; `browser` refuses to start if a loop already runs.

Reuse in other journeys: request `page` (a fresh context on the live server, base_url set, so
`page.goto("/")` works), `sign_in(page, email)` and `demo_staff`; mark the module `browser`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator

import pytest
from django_otp.oath import totp
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from staff.bootstrap import DEMO_PASSWORD, seed_demo_staff
from staff.models import AuthenticatorDevice, StaffUser
from staff.roles import roles_sync

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if _loop_running():
        raise RuntimeError("Browser tests must be sync: an asyncio loop already runs here.")
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
            )
            try:
                yield chromium
            finally:
                chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def console_errors() -> list[str]:
    """Console errors of the page (CSP violations show up here)."""
    return []


@pytest.fixture
def page(browser: Browser, live_server, console_errors: list[str]) -> Iterator[Page]:  # type: ignore[no-untyped-def]
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(15_000)
    page = context.new_page()

    def keep(message: ConsoleMessage) -> None:
        if message.type == "error":
            console_errors.append(message.text)

    page.on("console", keep)
    try:
        yield page
    finally:
        context.close()
    # Every journey fails on a Content-Security-Policy violation, whether or not it checks.
    violations = [e for e in console_errors if "Content Security Policy" in e]
    if violations:
        pytest.fail(f"CSP violations: {violations}", pytrace=False)


@pytest.fixture
def demo_staff(transactional_db: None) -> dict[str, StaffUser]:
    """The demo users payops_bootstrap creates, by role key, committed so the server sees them."""
    roles_sync()
    return {user.groups.get().name: user for user in seed_demo_staff()}


@pytest.fixture
def sign_in() -> Callable[..., None]:
    def do(page: Page, email: str, password: str = DEMO_PASSWORD, next_url: str = "") -> None:
        page.goto("/login/" + (f"?next={next_url}" if next_url else ""))
        page.get_by_label("Email").fill(email)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_load_state()
        if "/login/second-factor/" in page.url:
            page.get_by_label("Code").fill(authenticator_code(email))
            page.get_by_role("button", name="Verify").click()
            page.wait_for_load_state()

    return do


def authenticator_code(email: str) -> str:
    """What the person's authenticator app shows now (their first confirmed TOTP device).

    The device refuses a code of a time step already used (replays); journeys sign the same
    person in several times a minute, so the test's "app" forgets the last step first.
    """
    device = (
        AuthenticatorDevice.objects.filter(user__email=email, confirmed=True).order_by("id").first()
    )
    assert device is not None, f"{email} has no authenticator app"
    AuthenticatorDevice.objects.filter(pk=device.pk).update(last_t=-1, throttling_failure_count=0)
    return str(totp(device.seed, step=30, t0=0, digits=6)).zfill(6)
