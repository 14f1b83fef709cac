"""Chromium journey: a maker quotes, re-prices, drafts a payout with a document, and submits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from gateway.services.environments import environment_switch
from payouts.models import Payout, PayoutStatus
from quotes.models import Quote
from staff.models import StaffUser
from tests.finance import upstream_directory
from tests.gateway.conftest import (
    LiveEmulator,
    _fresh_shared_state,
    live_emulator,
    make_environment,
)

__all__ = ["_fresh_shared_state", "live_emulator"]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _outside_playwright(func, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Playwright's sync API keeps an event loop in this thread, where the gateway's sync bridge
    may not run: set the upstream up from a worker thread (its own DB connection, committed)."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    def run():  # type: ignore[no-untyped-def]
        try:
            return func(*args, **kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def test_maker_quotes_adjusts_drafts_with_a_document_previews_and_submits(
    live_emulator: LiveEmulator,
    page: Page,
    sign_in: Callable[..., None],
    demo_staff: dict[str, StaffUser],
    console_errors: list[str],
    tmp_path: Path,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    maker = demo_staff["finance_maker"]
    sandbox = make_environment(live_emulator, name="Journey sandbox")
    environment_switch(user=maker, environment=sandbox)
    account, recipient = _outside_playwright(
        upstream_directory, sandbox, live_emulator, maker=maker
    )
    live_emulator.to_business_hours()  # the exact figures below carry no night-time markup

    sign_in(page, maker.email)
    page.goto("/quotes/new/")
    page.select_option("select[name=quote_currency]", "USD")
    # The rails follow the currency (re-rendered over HTMX).
    expect(page.locator("select[name=account_type] option[value=WIRE]")).to_have_count(1)
    page.select_option("select[name=account_type]", "WIRE")
    page.fill("input[name=amount]", "100")
    page.get_by_role("button", name="Get quote").click()
    card = page.get_by_test_id("quote-card")
    expect(card.get_by_test_id("quote-status")).to_have_text("Active")
    expect(card.get_by_test_id("total-fees")).to_have_text("15.10 USD")
    expect(card.get_by_test_id("arithmetic-ok")).to_be_visible()
    expect(card.get_by_test_id("quote-countdown")).to_contain_text("left")

    card.locator("input[name=amount]").fill("120")
    card.get_by_role("button", name="Change amount").click()
    expect(page.get_by_test_id("base-amount")).to_have_text("120.00 USD")
    quote = Quote.objects.get()
    assert quote.repriced_count == 1

    page.get_by_test_id("use-quote").click()
    page.select_option("select[name=virtual_account]", str(account.pk))
    page.select_option("select[name=recipient]", str(recipient.pk))
    page.fill("input[name=reference]", "INV-2026-001")
    page.fill("input[name=memo]", "November invoice")
    page.get_by_role("button", name="Save draft").click()
    expect(page.get_by_test_id("payout-status")).to_have_text("Draft")
    expect(page.get_by_test_id("payout-amount")).to_have_text("120.00 USD")

    invoice = tmp_path / "invoice.pdf"
    invoice.write_bytes(b"%PDF-1.4\n% journey invoice\n%%EOF\n")
    documents = page.get_by_test_id("documents-panel")
    documents.locator("input[type=file]").set_input_files(str(invoice))
    documents.get_by_role("button", name="Upload").click()
    expect(page.get_by_test_id("documents-panel")).to_contain_text("application/pdf")

    page.get_by_test_id("preview-panel").get_by_role("button", name="Preview").click()
    expect(page.get_by_test_id("preview-fees")).to_contain_text("15.12 USD")
    expect(page.get_by_test_id("preview-recipient-amount")).to_have_text("120.00 USD")

    page.get_by_role("button", name="Submit for approval").click()
    expect(page.get_by_test_id("payout-status")).to_have_text("Pending approval")
    payout = Payout.objects.get()
    assert payout.status == PayoutStatus.PENDING_APPROVAL and payout.quote == quote
    assert payout.documents.count() == 1
    assert [c.to_status for c in payout.status_changes.all()] == ["draft", "pending_approval"]
    assert console_errors == []


def test_the_countdown_greys_the_quote_when_it_reaches_its_expiry(
    live_emulator: LiveEmulator,
    page: Page,
    sign_in: Callable[..., None],
    demo_staff: dict[str, StaffUser],
    console_errors: list[str],
) -> None:
    import re
    from datetime import timedelta
    from decimal import Decimal

    from django.utils import timezone

    from quotes.services import quote_request

    maker = demo_staff["finance_maker"]
    sandbox = make_environment(live_emulator, name="Countdown sandbox")
    environment_switch(user=maker, environment=sandbox)
    quote = _outside_playwright(
        quote_request,
        by=maker,
        environment=sandbox,
        base_currency="USD",
        quote_currency="MXN",
        amount=Decimal("100"),
    )
    # Bring the expiry close so the live countdown reaches it during the test.
    Quote.objects.filter(pk=quote.pk).update(expires_at=timezone.now() + timedelta(seconds=4))
    sign_in(page, maker.email)
    page.goto(f"/quotes/{quote.pk}/")
    card = page.get_by_test_id("quote-card")
    expect(card.get_by_test_id("quote-status")).to_have_text("Active")
    expect(card.get_by_test_id("quote-countdown")).to_contain_text("left")
    # At zero the countdown fires countdown:expired and the card re-renders from the server.
    expect(card).to_have_class(re.compile(r"\bis-expired\b"), timeout=15_000)
    expect(card.get_by_test_id("quote-status")).to_have_text("Expired")
    expect(card.get_by_role("button", name="Change amount")).to_have_count(0)
    expect(card.get_by_test_id("use-quote")).to_have_count(0)
    assert console_errors == []
