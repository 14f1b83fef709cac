"""Chromium: pages open in the browser show what ANOTHER process commits, without a reload.

The back office runs as production runs it (uvicorn, HTTP and websockets through Channels) on the
embedded default's channel layer; the changes are committed by a separate Python process, as the
worker commits them (`tests.console.child_live`), so only the outbox can carry them across.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.models import PayoutStatus
from staff.models import StaffUser
from tests.browser.fresh_load import expect_as_a_fresh_load
from tests.console.child_live import environment as child_environment
from tests.finance import make_draft, make_end_user, make_environment, make_virtual_account
from tests.servers import serve_in_thread

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("outbox_layer"),
]

SEEN = 20_000  # ms: a bound on the wait for the outcome, not a performance figure


@pytest.fixture
def backoffice(transactional_db: None) -> Iterator[str]:
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    from config.asgi import application

    with serve_in_thread(ASGIStaticFilesHandler(application), lifespan="off") as url:
        yield url


@pytest.fixture
def environment(demo_staff: dict[str, StaffUser]) -> Environment:
    environment = make_environment("Live updates sandbox")
    for person in demo_staff.values():
        environment_switch(user=person, environment=environment)
    return environment


@pytest.fixture
def open_page(
    browser: Browser, backoffice: str, sign_in: Callable[..., None]
) -> Iterator[Callable[[StaffUser, str], Page]]:
    contexts = []
    errors: list[str] = []

    def open_as(person: StaffUser, path: str) -> Page:
        context = browser.new_context(base_url=backoffice)
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        sign_in(page, person.email)
        page.goto(path)
        # Subscribed: from here on, every commit reaches this page.
        expect(page.locator("body[data-live-connected='yes']")).to_have_count(1)
        page.evaluate("() => { window.liveMarker = 'not reloaded'; }")
        return page

    yield open_as
    for context in contexts:
        context.close()
    assert [e for e in errors if "Content Security Policy" in e] == []


def another_process(*args: str) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "tests.console.child_live", *args],
        cwd=settings.BASE_DIR,
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]


def not_reloaded(page: Page) -> bool:
    return bool(page.evaluate("() => window.liveMarker === 'not reloaded'"))


def test_an_open_payout_page_moves_to_the_status_another_process_commits(
    open_page: Callable[[StaffUser, str], Page],
    demo_staff: dict[str, StaffUser],
    environment: Environment,
) -> None:
    payout = make_draft(
        maker=demo_staff["finance_maker"], environment=environment, status=PayoutStatus.SUBMITTING
    )
    page = open_page(demo_staff["finance_approver"], f"/payouts/{payout.pk}/")
    expect(page.get_by_test_id("payout-status")).to_have_text("Submitting")

    another_process("payout", str(payout.pk), PayoutStatus.CREATED)
    expect(page.get_by_test_id("payout-status")).to_have_text("Created", timeout=SEEN)
    another_process("payout", str(payout.pk), PayoutStatus.COMPLETED)

    expect(page.get_by_test_id("payout-status")).to_have_text("Completed", timeout=SEEN)
    assert not_reloaded(page)


def test_the_approvals_inbox_shows_a_payout_submitted_elsewhere_keeping_the_ticks(
    open_page: Callable[[StaffUser, str], Page],
    demo_staff: dict[str, StaffUser],
    environment: Environment,
) -> None:
    maker = demo_staff["finance_maker"]
    waiting = make_draft(maker=maker, environment=environment)
    another_process("payout", str(waiting.pk), PayoutStatus.PENDING_APPROVAL)
    newcomer = make_draft(maker=maker, environment=environment)
    page = open_page(demo_staff["finance_approver"], "/payouts/approvals/?scope=anyone")
    page.get_by_label(f"Select payout {waiting.pk}").check()
    expect(page.locator(f"tr[data-payout='{newcomer.pk}']")).to_have_count(0)

    another_process("payout", str(newcomer.pk), PayoutStatus.PENDING_APPROVAL)

    expect(page.locator(f"tr[data-payout='{newcomer.pk}']")).to_have_count(1, timeout=SEEN)
    expect(page.get_by_label(f"Select payout {waiting.pk}")).to_be_checked()
    assert not_reloaded(page)


def test_a_virtual_account_page_turns_active_when_the_worker_applies_the_activation(
    open_page: Callable[[StaffUser, str], Page],
    demo_staff: dict[str, StaffUser],
    environment: Environment,
) -> None:
    va = make_virtual_account(environment, status="activating", available_balance=None)
    page = open_page(demo_staff["compliance"], f"/accounts/virtual-accounts/{va.pk}/")
    expect(page.get_by_test_id("va-status")).to_have_text("Activating")

    another_process("activate", str(va.pk))

    expect(page.get_by_test_id("va-status")).to_have_text("Active", timeout=SEEN)
    expect(page.locator("#va-facts")).to_contain_text("123456789012")
    assert not_reloaded(page)


def test_an_end_user_page_shows_the_verification_decision_applied_elsewhere(
    open_page: Callable[[StaffUser, str], Page],
    demo_staff: dict[str, StaffUser],
    environment: Environment,
) -> None:
    end_user = make_end_user(environment, status="unverified", verification_status="not_started")
    page = open_page(demo_staff["compliance"], f"/end-users/{end_user.pk}/")
    expect(page.get_by_test_id("verification-status")).to_have_text("Waiting for a decision")

    another_process("verify", str(end_user.pk))

    expect(page.get_by_test_id("verification-status")).to_have_text("Verified", timeout=SEEN)
    expect(page.locator("#end-user-timeline")).to_contain_text("Verification accepted")
    assert not_reloaded(page)


# Each live page, after each change another process commits, reads as the same page loaded
# fresh: the change reached every fact it affects (headings, header facts, counts, countdowns),
# not only the badge that names it.


def test_a_live_payout_page_reads_as_a_fresh_load_after_each_upstream_answer(
    open_page: Callable[[StaffUser, str], Page],
    demo_staff: dict[str, StaffUser],
    environment: Environment,
) -> None:
    now = timezone.now()
    payout = make_draft(
        maker=demo_staff["finance_maker"],
        environment=environment,
        status=PayoutStatus.SUBMITTING,
        previewed_at=now,
        preview_total_fees=Decimal("2.50"),
        preview_recipient_amount=Decimal("1720.00"),
        preview_recipient_currency="MXN",
        preview_quote_id="quo_live_reserved",
        preview_quote_status="ACTIVE",
        preview_quote_expires_at=now + timedelta(minutes=15),
    )
    page = open_page(demo_staff["finance_approver"], f"/payouts/{payout.pk}/")
    expect(page.get_by_test_id("reservation-countdown")).to_have_count(1)

    another_process("initiated", str(payout.pk), "po_live_1")
    expect(page.get_by_test_id("upstream-id")).to_have_text("po_live_1", timeout=SEEN)
    expect_as_a_fresh_load(page, within_ms=SEEN)

    another_process("event", str(payout.pk), "COMPLETED")
    expect(page.get_by_test_id("payout-status")).to_have_text("Completed", timeout=SEEN)
    expect_as_a_fresh_load(page, within_ms=SEEN)
    # The reserved price was used: no countdown ticks on the completed payout.
    expect(page.get_by_test_id("reservation-countdown")).to_have_count(0)
    assert not_reloaded(page)


def test_a_live_account_page_reads_as_a_fresh_load_after_its_activation(
    open_page: Callable[[StaffUser, str], Page],
    demo_staff: dict[str, StaffUser],
    environment: Environment,
) -> None:
    va = make_virtual_account(environment, status="activating", available_balance=None)
    page = open_page(demo_staff["compliance"], f"/accounts/virtual-accounts/{va.pk}/")

    another_process("activate", str(va.pk))

    expect(page.get_by_test_id("va-status")).to_have_text("Active", timeout=SEEN)
    expect_as_a_fresh_load(page, within_ms=SEEN)
    expect(page.get_by_role("heading", level=1)).to_contain_text("9012")
    assert not_reloaded(page)


def test_a_live_end_user_page_reads_as_a_fresh_load_after_the_verification(
    open_page: Callable[[StaffUser, str], Page],
    demo_staff: dict[str, StaffUser],
    environment: Environment,
) -> None:
    end_user = make_end_user(environment, status="unverified", verification_status="not_started")
    page = open_page(demo_staff["compliance"], f"/end-users/{end_user.pk}/")

    another_process("verify", str(end_user.pk))
    expect(page.get_by_test_id("verification-status")).to_have_text("Verified", timeout=SEEN)
    expect_as_a_fresh_load(page, within_ms=SEEN)

    another_process("rename", str(end_user.pk))
    expect(page.locator("#main")).to_contain_text("Updated upstream", timeout=SEEN)
    expect_as_a_fresh_load(page, within_ms=SEEN)
    expect(page.get_by_role("heading", level=1)).to_contain_text("Renamed")
    assert not_reloaded(page)


def test_a_live_approvals_inbox_reads_as_a_fresh_load_as_payouts_arrive_and_leave(
    open_page: Callable[[StaffUser, str], Page],
    demo_staff: dict[str, StaffUser],
    environment: Environment,
) -> None:
    maker = demo_staff["finance_maker"]
    waiting = make_draft(maker=maker, environment=environment)
    another_process("payout", str(waiting.pk), PayoutStatus.PENDING_APPROVAL)
    newcomer = make_draft(maker=maker, environment=environment)
    page = open_page(demo_staff["finance_approver"], "/payouts/approvals/?scope=anyone")

    another_process("payout", str(newcomer.pk), PayoutStatus.PENDING_APPROVAL)
    expect(page.locator(f"tr[data-payout='{newcomer.pk}']")).to_have_count(1, timeout=SEEN)
    expect_as_a_fresh_load(page, within_ms=SEEN)

    another_process("payout", str(waiting.pk), PayoutStatus.CANCELLED)
    expect(page.locator(f"tr[data-payout='{waiting.pk}']")).to_have_count(0, timeout=SEEN)
    expect_as_a_fresh_load(page, within_ms=SEEN)
    assert not_reloaded(page)


def test_a_live_reconciliation_run_page_reads_as_a_fresh_load_when_the_run_completes(
    open_page: Callable[[StaffUser, str], Page],
    demo_staff: dict[str, StaffUser],
    environment: Environment,
) -> None:
    from books.reconciliation.models import ReconciliationRun, RunPhase

    now = timezone.now()
    run = ReconciliationRun.objects.create(
        environment=environment,
        window_start=now - timedelta(days=1),
        window_end=now,
        phase=RunPhase.DONE,  # its last step: no upstream call left
        started_by=demo_staff["finance_maker"],
    )
    page = open_page(demo_staff["finance_maker"], f"/books/reconciliation/runs/{run.pk}/")
    expect(page.get_by_test_id("run-state")).to_have_text("Running")

    another_process("run-step", str(run.pk))

    expect(page.get_by_test_id("run-state")).to_have_text("Completed", timeout=SEEN)
    expect_as_a_fresh_load(page, within_ms=SEEN)
    assert not_reloaded(page)
