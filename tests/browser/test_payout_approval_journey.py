"""Chromium journey: a maker creates a payout with a document, an approver approves it, sends
the code and takes it from the release step itself (sandbox only), and the payout page turns
completed live, without a reload.

The approver works with the keyboard alone (issue 23 part 5): the skip link, then Tab, typing and
Enter find the payout in the inbox, open it, approve it, send the code and release it, with a
visible focus indicator at every stop. axe-core checks each step's page (tests/browser/axe.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from gateway.services.environments import environment_switch
from payouts.models import Payout, PayoutStatus
from staff.models import StaffUser
from tests.browser.axe import assert_accessible
from tests.browser.first_screen import assert_next_action_on_first_screen
from tests.browser.keyboard import assert_skip_link_to_main, tab_to
from tests.browser.test_finance_journey import _outside_playwright
from tests.finance import upstream_directory
from tests.gateway.conftest import (
    CONTROL_HEADERS,
    LiveEmulator,
    _fresh_shared_state,
    live_emulator,
    make_environment,
)
from tests.identity import stepped_up
from tests.servers import serve_in_thread

__all__ = ["_fresh_shared_state", "live_emulator"]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def backoffice(transactional_db: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The back office as production runs it (HTTP and websockets through Channels) with its
    static files; queued tasks run at once in the server (django-q2 sync), as a worker would."""
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
    from django_q.conf import Conf

    from config.asgi import application

    monkeypatch.setattr(Conf, "SYNC", True)
    with serve_in_thread(ASGIStaticFilesHandler(application), lifespan="off") as url:
        yield url


def _context(browser: Browser, url: str, errors: list[str]) -> Page:
    context = browser.new_context(base_url=url)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return page


def _emulator(emulator: LiveEmulator, path: str, **kwargs: Any) -> Any:
    response = httpx.post(
        f"{emulator.url}/_control/{path}", headers=CONTROL_HEADERS, timeout=30, **kwargs
    )
    response.raise_for_status()
    return response.json()


def test_maker_to_approver_to_otp_to_completed_live(
    live_emulator: LiveEmulator,
    backoffice: str,
    browser: Browser,
    sign_in: Callable[..., None],
    demo_staff: dict[str, StaffUser],
    tmp_path: Path,
    settings: Any,
) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WEBHOOKS_PUBLIC_BASE_URL = backoffice
    maker = demo_staff["finance_maker"]
    approver = demo_staff["finance_approver"]
    sandbox = make_environment(live_emulator, name="Payout journey sandbox")
    sandbox.verification_email = "payout-otp@payops.test"
    sandbox.save(update_fields=["verification_email"])
    for person in (maker, approver):
        environment_switch(user=person, environment=sandbox)
    account, recipient = _outside_playwright(
        upstream_directory, sandbox, live_emulator, maker=maker
    )
    from webhooks.services.endpoints import webhook_endpoint_register

    _outside_playwright(
        webhook_endpoint_register,
        environment=sandbox,
        by=stepped_up(demo_staff["admin"]),  # the admin, past a second factor
        base_url=backoffice,
    )
    errors: list[str] = []

    # The maker: a draft with a supporting document, previewed and submitted.
    page = _context(browser, backoffice, errors)
    sign_in(page, maker.email)
    page.goto("/payouts/new/")
    assert_accessible(page)
    page.select_option("select[name=virtual_account]", str(account.pk))
    page.select_option("select[name=recipient]", str(recipient.pk))
    page.fill("input[name=amount]", "100.00")
    page.fill("input[name=reference]", "INV-JOURNEY-14")
    page.get_by_role("button", name="Save draft").click()
    expect(page.get_by_test_id("payout-status")).to_have_text("Draft")
    assert_accessible(page)
    invoice = tmp_path / "invoice.pdf"
    invoice.write_bytes(b"%PDF-1.4\n% journey invoice\n%%EOF\n")
    documents = page.get_by_test_id("documents-panel")
    documents.locator("input[type=file]").set_input_files(str(invoice))
    documents.get_by_role("button", name="Upload").click()
    expect(page.get_by_test_id("documents-panel")).to_contain_text("application/pdf")
    page.get_by_test_id("preview-panel").get_by_role("button", name="Preview", exact=True).click()
    expect(page.get_by_test_id("preview-recipient-amount")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("button", name="Submit for approval").click()
    expect(page.get_by_test_id("payout-status")).to_have_text("Pending approval")
    expect(page.get_by_test_id("approve")).to_have_count(0)  # never their own
    assert_accessible(page)
    payout = Payout.objects.get()

    # The approver, keyboard only: find the payout in the inbox, open it, approve it, send the
    # code, read it, enter it.
    review = _context(browser, backoffice, errors)
    sign_in(review, approver.email)
    review.goto("/payouts/approvals/")
    assert_accessible(review)
    assert_skip_link_to_main(review)
    tab_to(review, "input[name=q]")
    review.keyboard.type("INV-JOURNEY-14")
    review.keyboard.press("Enter")
    expect(review.get_by_test_id("inbox-count")).to_have_text("1 payout waiting for you.")
    tab_to(review, f"tr[data-payout='{payout.pk}'] a")
    review.keyboard.press("Enter")
    expect(review.get_by_test_id("payout-status")).to_have_text("Pending approval")
    assert_accessible(review)
    # Approving is the approver's next action: first on the page, under the header.
    assert_next_action_on_first_screen(review)
    expect(review.get_by_test_id("next-action").get_by_test_id("approve")).to_have_count(1)
    tab_to(review, "[data-testid=approve]")
    review.keyboard.press("Enter")
    expect(review.get_by_test_id("payout-status")).to_have_text("Approved")
    step = review.get_by_test_id("otp-panel")
    expect(step).to_have_attribute("data-otp-state", "not_sent")
    assert_accessible(review)
    # Now releasing it is: the step takes the approval's place at the top.
    assert_next_action_on_first_screen(review)
    expect(review.get_by_test_id("next-action").get_by_test_id("otp-panel")).to_have_count(1)
    tab_to(review, "[data-testid=otp-send]")
    review.keyboard.press("Enter")
    expect(step).to_have_attribute("data-otp-state", "sent")
    # Focus lands on the code field, and stays there when the live region re-renders.
    expect(review.locator("input[name=code]")).to_be_focused()
    expect(review.get_by_test_id("otp-countdown")).to_be_visible()
    expect(review.get_by_test_id("otp-tries")).to_have_text("5 of 5")
    # The step offers the sandbox mailbox's newest code, marked; one click fills the field.
    assert_accessible(review)
    hint = review.get_by_test_id("sandbox-code-hint")
    expect(hint).to_contain_text("Sandbox only")
    code = review.get_by_test_id("sandbox-code").inner_text().strip()
    assert len(code) == 6 and code.isdigit()
    review.keyboard.type(code)  # as read from the mailbox; "Use this code" is test_release_step's
    expect(review.locator("input[name=code]")).to_have_value(code)
    review.keyboard.press("Enter")
    expect(review.get_by_test_id("payout-status")).to_have_text("Created")
    assert_accessible(review)
    expect(review.get_by_test_id("upstream-id")).not_to_have_text("— (not sent yet)")
    expect(review.locator("body[data-live-connected=yes]")).to_have_count(1)

    # The upstream moves on and tells us by webhook; the open page follows without a reload.
    review.evaluate("window.__noReload = 'still here'")
    for _ in range(4):
        _emulator(live_emulator, "clock", json={"advance_seconds": 5})
        _emulator(live_emulator, "tick")
    _emulator(live_emulator, "webhooks/flush")
    expect(review.get_by_test_id("payout-status")).to_have_text("Completed", timeout=20_000)
    # Screen readers hear it: the page's polite live region says the new status.
    expect(review.locator("#live-announcer[role=status]")).to_have_text("Status Completed")
    assert review.evaluate("window.__noReload") == "still here"
    expect(review.get_by_test_id("timeline")).to_contain_text("Webhook event")
    assert_accessible(review)
    payout.refresh_from_db()
    assert payout.status == PayoutStatus.COMPLETED
    assert not errors, errors
