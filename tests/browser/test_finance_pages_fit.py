"""The pages issue 30 (items 7, 8, 10) changed, at a desk (1280 px) and a phone (390 px): nothing
overflows sideways, no CSP violation; the filters of the payout search and the audit trail log no
console error; a phone rejects a payout from the inbox card. Screenshots land in /tmp/finui-shots/
for a person to look at."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from gateway.services.environments import environment_switch
from payouts.models import ChangeSource, PayoutStatus
from staff.models import AuditEntry, StaffUser
from tests.books.statement_fixtures import build_october
from tests.browser.test_look import PayoutRecords, _move, page_overflow, payouts_at_every_stage
from tests.finance import make_draft, make_environment, make_recipient, make_virtual_account

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/finui-shots")
SIZES = {"desk": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}

# (name, role, path): each page as a role whose work it is.
PAGES: list[tuple[str, str, Callable[[PayoutRecords], str]]] = [
    ("recipient-approvals", "compliance", lambda r: "/accounts/recipients/approvals/"),
    ("recipient-approvals-maker", "finance_maker", lambda r: "/accounts/recipients/approvals/"),
    (
        "recipient-change",
        "finance_approver",
        lambda r: f"/accounts/recipients/{r.draft.recipient_id}/",
    ),
    ("payout-form", "finance_maker", lambda r: "/payouts/new/"),
    ("inbox", "finance_approver", lambda r: "/payouts/approvals/?scope=anyone"),
    (
        "audit-entry",
        "admin",
        lambda r: f"/audit/{AuditEntry.objects.get(action='recipient.change_proposed').pk}/",
    ),
]


def _shot(page: Page, name: str, size: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-{size}.png"), full_page=True)


@pytest.mark.parametrize("size", SIZES)
def test_the_changed_pages_fit_a_desk_and_a_phone(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
    size: str,
) -> None:
    records = payouts_at_every_stage(demo_staff)
    # A first payout to a new recipient: the inbox card carries the long flag.
    maker = demo_staff["finance_maker"]
    fresh = make_recipient(
        records.draft.environment,
        records.draft.virtual_account.end_user,
        created_by=demo_staff["compliance"],
        first_name="Wenceslao Maximiliano",
    )
    first = make_draft(
        maker=maker,
        environment=records.draft.environment,
        virtual_account=records.draft.virtual_account,
        recipient=fresh,
        amount="1234567.89",
    )
    _move(first, (PayoutStatus.PENDING_APPROVAL, ChangeSource.STAFF), by=maker)
    page.set_viewport_size(SIZES[size])
    signed_in = ""
    for name, role, path_of in PAGES:
        if role != signed_in:
            page.context.clear_cookies()
            sign_in(page, demo_staff[role].email)
            signed_in = role
        response = page.goto(path_of(records))
        assert response is not None and response.status == 200, name
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        if name == "inbox":
            expect(page.get_by_test_id("recipient-flag").first).to_have_text(
                "First payout to this recipient"
            )
        if name == "payout-form":  # the chosen labels show in the picture
            page.get_by_label("Pay from").select_option(index=1)
            page.get_by_label("Recipient", exact=True).select_option(index=1)
        _shot(page, name, size)
        assert page_overflow(page) == 0, name
    # The bulk confirmation, reached as an approver does: select one, ask to approve.
    page.context.clear_cookies()
    sign_in(page, demo_staff["finance_approver"].email)
    page.goto("/payouts/approvals/?scope=anyone")
    page.locator(f'input[name="payout"][value="{records.crypto.pk}"]').check()
    page.get_by_test_id("bulk-approve").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Approve 1 payout?")
    _shot(page, "bulk-confirm", size)
    assert page_overflow(page) == 0
    # No blank band between the menu and a short page's heading.
    gap = page.evaluate(
        "document.querySelector('main h1').getBoundingClientRect().top"
        " - document.querySelector('.sidebar').getBoundingClientRect().bottom"
    )
    if size == "phone":
        assert gap < 80, gap
    assert console_errors == []


def test_filtering_the_payout_search_and_the_audit_trail_logs_no_console_error(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
) -> None:
    payouts_at_every_stage(demo_staff)
    sign_in(page, demo_staff["admin"].email)
    for path in ("/payouts/", "/audit/"):
        for size in SIZES.values():
            page.set_viewport_size(size)
            page.goto(path)
            bar = page.locator("form.filter-bar")
            bar.locator("input[type=search], input[type=text]").first.fill("recipient")
            bar.get_by_role("button", name="Filter").click()
            page.wait_for_load_state("networkidle")
            expect(page).to_have_url(f"{page.url.split('?')[0]}?{page.url.split('?')[1]}")
            assert "?" in page.url, path
            page.go_back()
            page.wait_for_load_state("networkidle")
    assert console_errors == []


def test_a_phone_rejects_a_payout_from_its_inbox_card(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
) -> None:
    records = payouts_at_every_stage(demo_staff)
    page.set_viewport_size(SIZES["phone"])
    sign_in(page, demo_staff["finance_approver"].email)
    page.goto("/payouts/approvals/?scope=anyone")
    card = page.locator(f'tr[data-payout="{records.crypto.pk}"]')
    card.get_by_text("Reject…").click()
    card.get_by_label("Reason").fill("The invoice is for another company")
    card.get_by_role("button", name="Reject", exact=True).click()
    page.wait_for_load_state()
    records.crypto.refresh_from_db()
    assert records.crypto.status == PayoutStatus.REJECTED
    assert records.crypto.rejection_reason == "The invoice is for another company"


@pytest.mark.parametrize("size", SIZES)
def test_the_books_and_analytics_pages_fit_and_show_everything(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
    size: str,
) -> None:
    environment = make_environment()
    build_october(environment)
    make_virtual_account(environment, account_number="5550001234", balance_as_of=timezone.now())
    approver = demo_staff["finance_approver"]
    environment_switch(user=approver, environment=environment)
    page.set_viewport_size(SIZES[size])
    sign_in(page, approver.email)
    for name, path in (
        ("statements", "/books/statements/"),
        ("fees-report", "/books/fees/?start=2026-10-01&end=2026-10-31"),
        ("analytics", "/analytics/?start=2026-10-01&end=2026-10-31"),
    ):
        response = page.goto(path)
        assert response is not None and response.status == 200, name
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        _shot(page, name, size)
        assert page_overflow(page) == 0, name
    expect(page.locator("canvas[data-chart-drawn=true]")).to_have_count(6)
    scale = page.evaluate(
        "() => { const c = Chart.getChart(document.querySelector("
        "'[data-testid=figure-budget] canvas')); return [c.scales.y.max, "
        "Chart.getChart(document.querySelector('[data-testid=figure-volume] canvas'))"
        ".options.scales.y.title.text]; }"
    )
    assert scale == [100, "Amount sent (USD)"]
    if size == "desk":  # every column of the fees and the spread shows without scrolling
        page.goto("/books/fees/?start=2026-10-01&end=2026-10-31")
        hidden = page.evaluate(
            "[...document.querySelectorAll('[data-testid$=-report]')]"
            ".map(t => t.parentElement.scrollWidth - t.parentElement.clientWidth)"
        )
        assert len(hidden) == 2 and all(width <= 0 for width in hidden), hidden
    assert console_errors == []
