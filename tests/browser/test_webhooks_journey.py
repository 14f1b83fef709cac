"""Chromium journey: the emulator delivers events that appear live on the open event log, and an
admin rotates the secret in the browser while deliveries continue; none is lost."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from django.conf import settings as django_settings
from django.db import connection
from playwright.sync_api import Browser, Page, expect

from gateway.client import call_sync, upstream
from gateway.models import Environment
from staff.changes import change_approve
from staff.models import ChangeProposal, StaffUser
from tests.browser.axe import assert_accessible
from tests.finance import make_staff
from tests.gateway.conftest import CONTROL_HEADERS, LiveEmulator, live_emulator, make_environment  # noqa: F401
from tests.identity import stepped_up
from tests.servers import serve_in_thread
from webhooks.models import SecretSlot, WebhookDelivery, WebhookEndpoint, WebhookEvent

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def backoffice_asgi(transactional_db: None) -> Iterator[str]:
    """The back office as production runs it (HTTP + websockets through Channels), plus static."""
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    from config.asgi import application

    with serve_in_thread(ASGIStaticFilesHandler(application), lifespan="off") as url:
        yield url


@pytest.fixture
def asgi_page(browser: Browser, backoffice_asgi: str, console_errors: list[str]) -> Iterator[Page]:
    context = browser.new_context(base_url=backoffice_asgi)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    try:
        yield page
    finally:
        context.close()


def _create_user(environment: Environment, email: str) -> Any:
    """A gateway call from a plain thread (Playwright's loop owns the test thread)."""
    result: dict[str, Any] = {}

    def run() -> None:
        result["user"] = call_sync(
            upstream(environment).users.create,
            idempotency_key=str(uuid.uuid4()),
            email=email,
            phone_number="+15125550100",
            first_name="Ada",
            last_name="Lovelace",
            country="US",
        )

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    return result["user"]


def _flush(emulator: LiveEmulator) -> None:
    httpx.post(f"{emulator.url}/_control/webhooks/flush", headers=CONTROL_HEADERS, timeout=30)


def _emulator_deliveries(emulator: LiveEmulator) -> list[dict[str, Any]]:
    response = httpx.get(
        f"{emulator.url}/_control/webhooks/deliveries", headers=CONTROL_HEADERS, timeout=10
    )
    return list(response.json()["deliveries"])


def _approve_pending(admin: StaffUser) -> None:
    """The second admin approves the waiting webhook change (as on the Changes page). In a
    thread of its own: applying it calls the upstream through the gateway, whose sync entry
    cannot run in this thread while Playwright's event loop does."""
    failures: list[BaseException] = []

    def approve() -> None:
        try:
            proposal = ChangeProposal.objects.get(kind="webhooks.endpoint", state="pending")
            change_approve(proposal=proposal, by=admin)
        except BaseException as exc:  # reported in the test's thread
            failures.append(exc)
        finally:
            connection.close()

    worker = threading.Thread(target=approve)
    worker.start()
    worker.join(timeout=60)
    assert not failures, failures


def test_events_appear_live_and_a_rotation_loses_no_delivery(
    live_emulator: LiveEmulator,  # noqa: F811
    backoffice_asgi: str,
    asgi_page: Page,
    sign_in: Callable[..., None],
    demo_staff: dict[str, StaffUser],
    console_errors: list[str],
    settings: Any,
) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = backoffice_asgi
    environment = make_environment(live_emulator, name="Journey sandbox")
    page = asgi_page
    sign_in(page, demo_staff["admin"].email)

    # Register in the browser.
    page.goto("/webhooks/")
    page.locator(f"#endpoint-{environment.pk}").get_by_role("button", name="Register").click()
    # An admin change (staff.changes): proposed here, applied once another admin approves it.
    expect(
        page.get_by_text("Proposed: Register the webhook receiver of Journey sandbox")
    ).to_be_visible()
    assert_accessible(page)
    second_admin = stepped_up(make_staff("admin"))
    _approve_pending(second_admin)
    assert WebhookEndpoint.objects.get(environment=environment).registered_url

    # The event log is open and live; an emulator delivery shows up at the top, no reload.
    page.goto("/webhooks/events/")
    expect(page.get_by_test_id("live-status")).to_have_text("live")
    page.evaluate("window.__noReload = 'still here'")
    user = _create_user(environment, "live@example.com")
    _flush(live_emulator)
    created = WebhookEvent.objects.get(event_type="user.created")
    expect(page.locator(f"tr[data-event-id='{created.event_id}']")).to_contain_text(
        "user.created", timeout=10_000
    )
    # Both of the user's events arrived; the newer is on top, whichever row loaded first.
    newest_two = [e.event_id for e in WebhookEvent.objects.order_by("-id")[:2]]
    rows = page.locator("#event-rows tr")
    expect(rows.nth(0)).to_have_attribute("data-event-id", newest_two[0])
    expect(rows.nth(1)).to_have_attribute("data-event-id", newest_two[1])
    assert page.evaluate("window.__noReload") == "still here"
    assert user.user_id in created.object_ids
    assert_accessible(page)  # with live rows

    # Deliveries keep coming while the admin rotates the secret in another tab.
    stop = threading.Event()
    sent: list[str] = []

    def keep_delivering() -> None:
        number = 0
        while not stop.is_set() and number < 12:
            number += 1
            _create_user(environment, f"during-{number}@example.com")
            sent.append(f"during-{number}")
            _flush(live_emulator)

    sender = threading.Thread(target=keep_delivering)
    sender.start()
    admin_tab = page.context.new_page()
    admin_tab.goto("/webhooks/")
    old_masked = admin_tab.get_by_test_id("current-secret").inner_text()
    admin_tab.locator(f"#endpoint-{environment.pk}").get_by_test_id("rotate-secret").click()
    # A confirmation first, which says how long the previous secret stays accepted.
    expect(admin_tab.get_by_test_id("rotation-explained")).to_contain_text("Overlap window")
    assert_accessible(admin_tab)
    admin_tab.get_by_test_id("confirm-rotate").click()
    expect(
        admin_tab.get_by_text("Proposed: Rotate the webhook secret of Journey sandbox")
    ).to_be_visible()
    _approve_pending(second_admin)
    admin_tab.goto("/webhooks/")
    assert admin_tab.get_by_test_id("current-secret").inner_text() != old_masked
    _create_user(environment, "after-rotation@example.com")
    stop.set()
    sender.join(timeout=120)
    _flush(live_emulator)

    deliveries = _emulator_deliveries(live_emulator)
    emitted = {d["event_id"] for d in deliveries}
    assert all(d["status_code"] == 200 for d in deliveries), [
        d for d in deliveries if d["status_code"] != 200
    ]
    stored = set(WebhookEvent.objects.values_list("event_id", flat=True))
    assert emitted == stored
    assert len(stored) >= 2 * (len(sent) + 2)
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.previous_accepted()
    slots = set(WebhookDelivery.objects.values_list("matched_secret", flat=True))
    assert SecretSlot.CURRENT in slots
    # The newest events are on the open log too, still without a reload.
    newest = WebhookEvent.objects.order_by("-received_at", "-id").first()
    assert newest is not None
    expect(page.locator(f"tr[data-event-id='{newest.event_id}']")).to_be_visible(timeout=10_000)
    assert page.evaluate("window.__noReload") == "still here"
    assert not console_errors, console_errors
    assert backoffice_asgi == django_settings.WEBHOOKS_PUBLIC_BASE_URL
