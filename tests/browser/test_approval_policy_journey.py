"""Chromium journey: an admin edits a draft approval policy (a chain by role and a limit), sees
its impact on the payouts waiting now, then publishes it; nothing changes before publishing."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from payouts.models import ApprovalPolicy, ChangeSource, Payout, PayoutStatus
from payouts.states import payout_transition
from staff.changes import change_approve
from staff.models import ChangeProposal, StaffUser
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import stepped_up

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _waiting(maker: StaffUser, amount: str) -> Payout:
    from gateway.models import Environment

    environment = Environment.objects.first() or make_environment()
    payout = make_draft(maker=maker, environment=environment, amount=amount)
    payout_transition(payout, PayoutStatus.PENDING_APPROVAL, source=ChangeSource.STAFF, by=maker)
    return payout


def test_admin_previews_a_draft_policy_then_publishes_it(
    page: Page,
    sign_in: Callable[..., None],
    demo_staff: dict[str, StaffUser],
    console_errors: list[str],
) -> None:
    big = _waiting(demo_staff["finance_maker"], "15000.00")
    small = _waiting(demo_staff["finance_maker"], "40.00")
    sign_in(page, demo_staff["admin"].email)
    page.goto("/payouts/approval-policy/")
    page.get_by_label("Rules").fill("10000 USD * * finance_approver:1>admin:1")
    page.get_by_label("Limits").fill("maker day 15020 USD")
    page.get_by_test_id("preview").click()

    impact = page.get_by_test_id("impact")
    big_row = impact.get_by_test_id("impact-row").filter(has_text=f"#{big.pk}")
    expect(big_row).to_contain_text(
        "1 holder of the Finance approver role, then 1 holder of the Admin role"
    )
    # Counted as if submitted now: the maker's other waiting payout (40.00) is in the day.
    expect(big_row).to_contain_text("blocked")
    expect(big_row).to_contain_text("14980.00 USD is left")
    small_row = impact.get_by_test_id("impact-row").filter(has_text=f"#{small.pk}")
    expect(small_row).to_contain_text("1 approver")
    expect(small_row).not_to_contain_text("finance_approver")
    assert not ApprovalPolicy.objects.exists()

    # The draft is still in the form: publish it as previewed.
    expect(page.get_by_label("Rules")).to_have_value("10000 USD * * finance_approver:1>admin:1")
    page.get_by_test_id("publish").click()
    # An admin change (staff.changes): proposed here, published once another admin approves it.
    expect(page.get_by_text("Proposed: Publish approval policy version 1")).to_be_visible()
    assert not ApprovalPolicy.objects.exists()
    proposal = ChangeProposal.objects.get(kind="payouts.approval_policy")
    change_approve(proposal=proposal, by=stepped_up(make_staff("admin")))
    page.reload()
    expect(page.get_by_test_id("limits")).to_contain_text("maker's daily limit of 15020 USD")
    policy = ApprovalPolicy.objects.get()
    assert policy.rules.get().chain == [
        {"role": "finance_approver", "count": 1},
        {"role": "admin", "count": 1},
    ]
    big.refresh_from_db()
    assert big.approvals_required == 1  # waiting payouts keep the chain they were submitted with
    assert console_errors == []
