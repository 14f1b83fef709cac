"""Every list page at a desktop's 1280 px and a phone's 390 px, as the role whose work it is.

At 1280 px no list table is wider than its container: every header cell, money first, ends inside
the container and the viewport. At 390 px the rows are cards (the first cell, the amount where
there is one, leads; each other cell carries its column's name), nothing overflows the page and
the main navigation is a menu that opens and closes from the keyboard. One page load per list and
width. Screenshots of each go to var/screenshots/ (git-ignored) for a person to look at.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone
from playwright.sync_api import Locator, Page, expect

from accounts.models import VirtualAccount
from gateway.models import UpstreamCall
from staff import crypto
from staff.models import StaffUser
from tests.browser.test_look import PayoutRecords, page_overflow, payouts_at_every_stage
from tests.finance import make_end_user
from webhooks.models import (
    MissedEvent,
    SignatureVerdict,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = Path(settings.BASE_DIR, "var", "screenshots")


@dataclass(frozen=True)
class ListPage:
    name: str
    path: str
    # The first column's header where it is money: it leads the table and the card.
    money: str = ""


# Each role's lists (one sign-in per role).
LISTS: dict[str, list[ListPage]] = {
    "finance_maker": [
        ListPage("payouts", "/payouts/", money="Amount"),
        ListPage("drafts", "/payouts/?status=draft", money="Amount"),
        ListPage("quotes", "/quotes/", money="You send"),
        ListPage("virtual-accounts", "/accounts/", money="Available balance"),
        ListPage("recipients", "/accounts/recipients/"),
    ],
    "finance_approver": [
        ListPage("approvals", "/payouts/approvals/?scope=anyone", money="Amount"),
    ],
    "compliance": [
        ListPage("end-users", "/end-users/"),
        ListPage("kyc-queue", "/end-users/kyc/?reviewed=all"),
    ],
    "admin": [
        ListPage("environments", "/gateway/environments/"),
        ListPage("call-log", "/gateway/calls/"),
        ListPage("webhook-events", "/webhooks/events/"),
        ListPage("refused-deliveries", "/webhooks/events/?status=invalid"),
        ListPage("webhook-endpoints", "/webhooks/"),
        ListPage("missed-events", "/webhooks/missed/"),
    ],
}


def upstream_traffic(records: PayoutRecords) -> str:
    """Upstream ids as the upstream writes them (UUIDs), an end user waiting for KYC, a call log,
    an endpoint, an event, a refused delivery and a missed event, all long."""
    environment = records.completed.environment
    long_id = "0123456789abcdef" * 3
    account_id = str(uuid.uuid4())
    VirtualAccount.objects.filter(pk=records.completed.virtual_account_id).update(
        upstream_id=account_id, account_number="9876543210"
    )
    make_end_user(
        environment,
        first_name="Wilhelmina Konstanze",
        last_name="Oberhauser-Lichtenstein",
        email="wilhelmina.oberhauser-lichtenstein@a-long-company-domain.example.test",
        verification_status="rejected",
        reasons=["document_unreadable", "address_does_not_match_the_document"],
    )
    UpstreamCall.objects.create(
        environment=environment,
        operation="payout_create",
        method="POST",
        path=f"/v1/payouts/{long_id}/initiate",
        status=422,
        duration_ms=1234,
        attempt=2,
        priority="interactive",
        idempotency_key=f"idem-{long_id}",
        error_code="insufficient_balance_for_payout_including_fees",
        request_body='{"amount": "1234567.89", "reference": "' + "X" * 120 + '"}',
        response_body='{"error": "' + "insufficient balance " * 8 + '"}',
    )
    endpoint = WebhookEndpoint.objects.create(
        environment=environment,
        secret_encrypted=crypto.encrypt("whsec_" + long_id),
        secret_set_at=timezone.now(),
        registered_at=timezone.now(),
        registered_url=f"https://payops.example.test/webhooks/in/{long_id}/",
    )
    WebhookEvent.objects.create(
        environment=environment,
        event_id=f"evt_{long_id}",
        event_type="payout.completed",
        payload={"event": "payout.completed", "data": {"event_id": f"evt_{long_id}"}},
        status="processed",
        object_ids=records.completed.upstream_id or "",
    )
    WebhookDelivery.objects.create(
        endpoint=endpoint,
        body=b"{}",
        verdict=SignatureVerdict.INVALID,
        signature="f" * 64,
        reason="The signature matches neither the current nor the previous secret",
        response_status=401,
    )
    MissedEvent.objects.create(
        environment=environment,
        object_kind="payout",
        upstream_id=f"pay_{long_id}",
        expected_event="payout.completed",
        previous_state="processing",
        observed_state="completed",
        source="poll",
        detected_at=timezone.now() - timedelta(minutes=3),
    )
    return account_id


def table_fits(page: Page) -> list[str]:
    """What sticks out of its container or the viewport at this width, per table (empty: fits)."""
    return page.evaluate(
        """() => {
            const problems = [];
            for (const table of document.querySelectorAll('main table.table')) {
                const box = (table.closest('.table-scroll') || table.parentElement)
                    .getBoundingClientRect();
                const right = Math.min(box.right, document.documentElement.clientWidth) + 0.5;
                for (const th of table.querySelectorAll('thead th')) {
                    const edge = th.getBoundingClientRect().right;
                    if (edge > right) problems.push(`${th.textContent.trim()} ends at ${edge}`);
                }
            }
            return problems;
        }"""
    )


def headers(page: Page) -> list[str]:
    return [
        text.strip()
        for text in page.locator("main table.table").first.locator("thead th").all_inner_texts()
    ]


def card_of_first_row(page: Page) -> dict[str, object]:
    """How the first row of the first table renders: its display, and each cell's label."""
    return page.evaluate(
        """() => {
            const row = document.querySelector('main table.table tbody tr');
            const cells = [...row.children].map(cell => ({
                label: getComputedStyle(cell, '::before').content,
                text: cell.textContent.trim(),
                money: !!cell.querySelector('.money'),
            }));
            const head = document.querySelector('main table.table thead');
            return {
                row: getComputedStyle(row).display,
                head: head ? head.getBoundingClientRect().height : 0,
                cells,
            };
        }"""
    )


def shoot(page: Page, name: str, width: int) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=True)


@pytest.mark.parametrize("role", list(LISTS))
def test_lists_show_their_money_at_1280_and_are_cards_at_390(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
    role: str,
) -> None:
    records = payouts_at_every_stage(demo_staff)
    account_id = upstream_traffic(records)
    owner = records.completed.virtual_account.end_user.display_name
    sign_in(page, demo_staff[role].email)
    for listed in LISTS[role]:
        page.set_viewport_size(DESKTOP)
        response = page.goto(listed.path)
        assert response is not None and response.status == 200, listed.name
        shoot(page, listed.name, DESKTOP["width"])
        assert table_fits(page) == [], listed.name
        if listed.money:
            assert headers(page)[0] == listed.money, listed.name
        if listed.path.startswith("/payouts/"):  # the paying account by its owner's name
            assert account_id not in page.content() and owner in page.content(), listed.name

        page.set_viewport_size(PHONE)
        page.goto(listed.path)
        shoot(page, listed.name, PHONE["width"])
        assert page_overflow(page) == 0, listed.name
        card = card_of_first_row(page)
        assert card["row"] in ("block", "grid"), listed.name
        assert card["head"] <= 1, listed.name  # the column names moved into the cells
        cells = card["cells"]
        assert isinstance(cells, list)
        labelled = [cell for cell in cells[1:] if cell["text"]]
        assert labelled and all(cell["label"] not in ("none", "normal", '""') for cell in labelled)
        if listed.money:
            assert cells[0]["money"], listed.name
    # The live server has no WebSocket route (the event log's live stream): anything else fails.
    assert [e for e in console_errors if "WebSocket" not in e] == []


def test_the_navigation_is_a_menu_on_a_phone_that_the_keyboard_opens_and_closes(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    sign_in(page, demo_staff["admin"].email)
    menu = page.get_by_test_id("nav-menu")
    toggle = menu.locator("summary")
    link = page.get_by_role("navigation", name="Main").get_by_role("link", name="Call log")

    page.set_viewport_size(DESKTOP)
    page.goto("/")
    expect(toggle).to_be_hidden()
    expect(link).to_be_visible()

    page.set_viewport_size(PHONE)
    page.goto("/")
    expect(toggle).to_be_visible()
    expect(link).to_be_hidden()
    toggle.focus()
    page.keyboard.press("Enter")
    expect(link).to_be_visible()
    shoot(page, "navigation-open", PHONE["width"])
    link.focus()
    expect(link).to_be_focused()
    toggle.focus()
    page.keyboard.press("Space")
    expect(link).to_be_hidden()
    assert page_overflow(page) == 0


def within_the_phone(button: Locator) -> None:
    """The button can be scrolled to, is enabled, and lies inside the phone's width."""
    button.scroll_into_view_if_needed()
    expect(button).to_be_visible()
    expect(button).to_be_enabled()
    box = button.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]


def test_an_approver_reaches_approve_and_reject_from_the_inbox_on_a_phone(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    records = payouts_at_every_stage(demo_staff)
    page.set_viewport_size(PHONE)
    sign_in(page, demo_staff["finance_approver"].email)
    page.goto("/payouts/approvals/")
    card = page.locator(f"tr[data-payout='{records.crypto.pk}']")
    expect(card.locator(".money").first).to_have_text("1,234,567.89 USD")
    card.get_by_role("checkbox").check()
    within_the_phone(page.get_by_test_id("bulk-approve"))
    card.get_by_role("link", name="Review").click()

    approve, reject = page.get_by_test_id("approve"), page.get_by_test_id("reject")
    within_the_phone(approve)
    within_the_phone(reject)
    page.get_by_label("Reason for the maker").fill("The invoice does not match the amount.")
    reject.click()
    expect(page.get_by_test_id("payout-status")).to_have_text("Rejected")
    assert page_overflow(page) == 0
