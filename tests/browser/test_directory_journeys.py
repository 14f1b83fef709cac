"""Directory journeys in Chromium against the emulator over HTTP: compliance onboards a user who
is verified, and one who is rejected with the reason in plain words; finance opens a virtual
account and registers a recipient, fixing a mistyped routing number shown on its field."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from accounts.models import Recipient
from gateway.models import Environment
from staff.models import StaffUser
from tests.browser.axe import assert_accessible
from tests.directory.conftest import emulator_events
from tests.gateway.conftest import live_emulator, sandbox  # noqa: F401  (fixtures)
from users.events import end_user_apply_event
from users.models import EndUser

pytestmark = pytest.mark.browser


def create_end_user(page: Page, *, email: str, first: str, last: str) -> None:
    page.goto("/end-users/")
    page.get_by_role("link", name="New end user").click()
    assert_accessible(page)
    page.get_by_label("Individual").check()
    page.get_by_label("Email").fill(email)
    page.get_by_label("Phone number").fill("+52 55 1234 5678")
    page.get_by_label("First name").fill(first)
    page.get_by_label("Last name").fill(last)
    page.get_by_label("Country").select_option("MX")
    page.get_by_role("button", name="Create end user").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"{first} {last}")
    assert_accessible(page)


def test_compliance_creates_a_user_and_sees_them_verified(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    sandbox: Environment,  # noqa: F811
    console_errors: list[str],
) -> None:
    sign_in(page, demo_staff["compliance"].email)
    create_end_user(page, email="ana@example.com", first="Ana", last="García")
    expect(page.get_by_test_id("verification-status")).to_have_text("Verified")
    expect(page.get_by_test_id("upstream-id")).not_to_have_text("not created upstream yet")
    expect(page.get_by_test_id("timeline")).to_contain_text("Created by compliance@payops.local")
    page.goto("/end-users/?verification_status=verified")
    expect(page.get_by_test_id("end-user-list")).to_contain_text("ana@example.com")
    assert [e for e in console_errors if "Content Security Policy" in e] == []


def test_compliance_creates_a_reject_user_and_sees_the_reason(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    sandbox: Environment,  # noqa: F811
) -> None:
    sign_in(page, demo_staff["compliance"].email)
    create_end_user(page, email="bo+reject@example.com", first="Bo", last="Ruiz")
    expect(page.get_by_test_id("verification-status")).to_have_text("Rejected")
    # The reasons travel only in user.verification.failed (decisions.md 2: the user record has
    # none); the webhooks app delivers it to this same service. Deliver it as the receiver would.
    (failed,) = emulator_events(sandbox, event="user.verification.failed")
    end_user_apply_event(environment=sandbox, event_type=failed["event"], data=failed["data"])
    page.reload()
    expect(page.get_by_test_id("rejection-reasons")).to_contain_text(
        "The identity document could not be read."
    )
    assert_accessible(page)
    page.goto("/end-users/kyc/")
    expect(page.get_by_test_id("kyc-queue")).to_contain_text("bo+reject@example.com")
    assert_accessible(page)


def test_finance_opens_an_account_and_fixes_a_recipients_routing_number(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    sandbox: Environment,  # noqa: F811
    live_emulator: object,  # noqa: F811
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from users.services import end_user_create

    # The gateway's sync bridge cannot run on Playwright's event-loop thread: use another one.
    user = (
        ThreadPoolExecutor(1)
        .submit(
            end_user_create,
            environment=sandbox,
            by=demo_staff["compliance"],
            type="individual",
            email="cy@example.com",
            phone_number="+52 55 1234 5678",
            first_name="Cy",
            last_name="Soto",
            country="MX",
        )
        .result()
    )
    assert user.is_verified
    sign_in(page, demo_staff["finance_maker"].email)

    page.goto("/accounts/")
    page.get_by_role("link", name="Open a virtual account").click()
    page.get_by_label("End user").select_option(str(user.pk))
    page.get_by_label("Fiat (debits the balance)").check()
    page.get_by_role("button", name="Open account").click()
    expect(page.get_by_test_id("va-status")).to_have_text("Activating")
    live_emulator.control("POST", "clock", json={"advance_seconds": 30})  # type: ignore[attr-defined]
    live_emulator.control("POST", "tick")  # type: ignore[attr-defined]
    page.get_by_test_id("refresh-balance").click()
    expect(page.get_by_test_id("va-status")).to_have_text("Active")
    expect(page.get_by_test_id("available-balance")).to_have_text("0.00 USD")

    page.goto("/accounts/recipients/new/")
    page.get_by_label("End user").select_option(str(user.pk))
    page.get_by_label("Individual").check()
    page.get_by_label("First name").fill("Luis")
    page.get_by_label("Last name").fill("Pérez")
    page.get_by_label("Street and number").fill("1 Main St")
    page.get_by_label("City").fill("Austin")
    page.get_by_label("Country").select_option("US")
    page.get_by_label("Bank transfer").select_option("WIRE")
    page.get_by_label("Account number").fill("123456789")
    page.get_by_label("ABA routing number").fill("021000022")
    page.get_by_role("button", name="Register recipient").click()
    routing = page.locator('[data-field="routing_number"]')
    expect(routing.get_by_test_id("field-error")).to_contain_text("check digit")
    assert Recipient.objects.count() == 0
    page.get_by_label("ABA routing number").fill("021000021")
    page.get_by_role("button", name="Register recipient").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Luis Pérez")
    expect(page.get_by_test_id("created-by")).to_have_text("maker@payops.local")
    # Dual control: not payable until someone else approves it, and the page says so.
    expect(page.get_by_test_id("recipient-status")).to_have_text("Pending approval")
    expect(page.get_by_test_id("not-payable")).to_contain_text("second person's approval")
    expect(page.get_by_test_id("decision-refusal")).to_be_visible()  # a maker cannot approve
    assert Recipient.objects.get().end_user == EndUser.objects.get(pk=user.pk)
