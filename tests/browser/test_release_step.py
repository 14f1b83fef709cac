"""The release step in Chromium, on a phone: it fits, a hint fills the field in one click, and
the code's expiry turns the step to "expired" (with a resend) by itself, without a reload."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from gateway.services.environments import environment_switch
from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.release import code_hints
from payouts.release.code_hints import CodeHint
from payouts.states import payout_transition
from staff.audit import audit_record
from staff.models import StaffUser
from tests.browser.first_screen import assert_next_action_on_first_screen
from tests.browser.test_look import PHONE, page_overflow
from tests.finance import make_draft, make_environment

pytestmark = pytest.mark.browser


def approved_with_a_code(staff: dict[str, StaffUser], *, seconds_left: float) -> Payout:
    environment = make_environment("Release step sandbox")
    environment.verification_email = "a-rather-long-verification-address@payops.example.test"
    environment.save(update_fields=["verification_email"])
    for user in staff.values():
        environment_switch(user=user, environment=environment)
    maker = staff["finance_maker"]
    payout = make_draft(maker=maker, environment=environment)
    for status in (PayoutStatus.PENDING_APPROVAL, PayoutStatus.APPROVED):
        payout_transition(payout, status, source=ChangeSource.STAFF, by=maker)
    payout.otp_sent_to = environment.verification_email
    payout.otp_expires_at = timezone.now() + timedelta(seconds=seconds_left)
    payout.save(update_fields=["otp_sent_to", "otp_expires_at"])
    audit_record(actor=staff["finance_approver"], action="payout.otp_sent", target=payout)
    return payout


def test_the_step_fits_a_phone_fills_in_one_click_and_expires_on_its_own(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hint = CodeHint(code="918273", sent_at=timezone.now(), source="a test mailbox")
    monkeypatch.setattr(code_hints, "CODE_HINT_PROVIDERS", {"test": lambda payout: hint})
    page.set_viewport_size(PHONE)
    sign_in(page, demo_staff["finance_approver"].email)
    # The code's 6 seconds start once the person is signed in (a slow sign-in must not spend them).
    payout = approved_with_a_code(demo_staff, seconds_left=6)
    page.goto(f"/payouts/{payout.pk}/")
    step = page.get_by_test_id("otp-panel")
    expect(step).to_have_attribute("data-otp-state", "sent")
    # The approver's next action: on the first screen, above preview, documents and approvals.
    assert_next_action_on_first_screen(page)
    expect(page.get_by_test_id("next-action").get_by_test_id("otp-panel")).to_have_count(1)
    assert page_overflow(page) == 0
    page.get_by_test_id("use-sandbox-code").click()
    field = page.locator("input[name=code]")
    expect(field).to_have_value("918273")
    expect(field).to_be_focused()
    page.evaluate("window.__noReload = 'still here'")
    # At zero the countdown asks the server, which says expired and offers a new code.
    expect(step).to_have_attribute("data-otp-state", "expired", timeout=15_000)
    expect(step).to_contain_text("The code expired")
    expect(page.get_by_test_id("otp-send")).to_have_text("Send a new code")
    expect(page.get_by_test_id("use-sandbox-code")).to_have_count(0)
    assert page.evaluate("window.__noReload") == "still here"
    assert page_overflow(page) == 0
    assert console_errors == []
