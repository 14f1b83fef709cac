"""Chromium: an approver whose second factor is not fresh sees "Confirm it's you" on the payout
page, and Approve (an HTMX post) takes the whole page to the step-up prompt, coming back to the
payout afterwards; nothing is approved."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from payouts.models import Approval, ChangeSource, PayoutStatus
from payouts.states import payout_transition
from staff.models import StaffUser
from tests.finance import make_draft, make_environment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_approve_without_a_fresh_second_factor_goes_to_the_step_up_prompt(
    page: Page,
    sign_in: Callable[..., None],
    demo_staff: dict[str, StaffUser],
    settings: Any,
) -> None:
    # Whatever second factor sign-in verified is already too old: the prompt is always due.
    settings.PAYOPS_STEP_UP_MINUTES = 0
    maker = demo_staff["finance_maker"]
    payout = make_draft(maker=maker, environment=make_environment())
    payout_transition(payout, PayoutStatus.PENDING_APPROVAL, source=ChangeSource.STAFF, by=maker)
    sign_in(page, demo_staff["finance_approver"].email)
    page.goto(f"/payouts/{payout.pk}/")
    notice = page.get_by_test_id("step-up-notice")
    expect(notice).to_be_visible()
    expect(page.get_by_test_id("step-up-link")).to_have_text("Confirm it's you")

    page.get_by_test_id("approve").click()

    step_up = reverse("staff:step_up")
    page.wait_for_url(lambda url: urlsplit(url).path == step_up)
    assert parse_qs(urlsplit(page.url).query)["next"] == [f"/payouts/{payout.pk}/"]
    assert not Approval.objects.filter(payout=payout).exists()
