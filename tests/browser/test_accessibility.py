"""Checked accessibility (issue 23 part 5): axe-core finds no serious or critical WCAG 2.2 AA
violation on any main page, as each role that works there, with records on the pages.

One sign-in per role: every page of its navigation (the Django admin aside: Django's own look),
then the records' own pages and forms it uses. All findings of a role are reported at once. The
check itself is proven able to fail on a page with known violations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from playwright.sync_api import Page

from payouts.models import Payout
from quotes.models import Quote
from staff.models import AuditEntry, StaffUser
from tests.browser.axe import assert_accessible, describe, serious_violations
from tests.browser.test_lists import upstream_traffic
from tests.browser.test_look import PayoutRecords, payouts_at_every_stage
from webhooks.models import WebhookDelivery, WebhookEvent

pytestmark = pytest.mark.browser


@dataclass(frozen=True)
class Seeded:
    payouts: PayoutRecords
    event: WebhookEvent
    delivery: WebhookDelivery
    audit_entry: AuditEntry
    quote: Quote


# Besides the navigation's pages: the records and forms each role works on.
RECORD_PAGES: dict[str, list[Callable[[Seeded], str]]] = {
    "finance_maker": [
        lambda s: "/payouts/new/",
        lambda s: f"/payouts/{s.payouts.draft.pk}/",
        lambda s: "/quotes/new/",
        lambda s: f"/quotes/{s.quote.pk}/",
        lambda s: f"/accounts/virtual-accounts/{s.payouts.draft.virtual_account_id}/",
        lambda s: f"/accounts/recipients/{s.payouts.draft.recipient_id}/",
        lambda s: "/profile/",
        lambda s: "/password/",
    ],
    "finance_approver": [
        lambda s: "/payouts/approvals/?scope=anyone",
        lambda s: f"/payouts/{s.payouts.pending.pk}/",
        lambda s: f"/payouts/{s.payouts.completed.pk}/",
        lambda s: f"/payouts/{s.payouts.crypto.pk}/",
        lambda s: "/accounts/recipients/approvals/",
    ],
    "compliance": [
        lambda s: "/end-users/new/",
        lambda s: f"/end-users/{s.payouts.draft.virtual_account.end_user_id}/",
        lambda s: f"/end-users/{s.payouts.draft.virtual_account.end_user_id}/edit/",
        lambda s: "/end-users/kyc/?reviewed=all",
        lambda s: "/accounts/recipients/new/",
        lambda s: f"/accounts/recipients/{s.payouts.draft.recipient_id}/edit/",
    ],
    "admin": [
        lambda s: "/gateway/environments/new/",
        lambda s: "/gateway/quota/",
        lambda s: "/webhooks/",
        lambda s: "/webhooks/missed/",
        lambda s: f"/webhooks/events/{s.event.pk}/",
        lambda s: f"/webhooks/deliveries/{s.delivery.pk}/",
        lambda s: f"/audit/{s.audit_entry.pk}/",
    ],
    "auditor": [
        lambda s: f"/payouts/{s.payouts.completed.pk}/",
        lambda s: "/audit/verify/",
    ],
}


def seeded(staff: dict[str, StaffUser]) -> Seeded:
    payouts = payouts_at_every_stage(staff)
    upstream_traffic(payouts)
    entry = AuditEntry.objects.order_by("-pk").first()
    assert entry is not None and Payout.objects.exists()
    return Seeded(
        payouts=payouts,
        event=WebhookEvent.objects.get(),
        delivery=WebhookDelivery.objects.get(),
        audit_entry=entry,
        quote=Quote.objects.get(),
    )


def navigation_pages(page: Page) -> list[str]:
    links: list[str] = page.locator("nav.sidebar a[data-nav]").evaluate_all(
        "links => links.filter(a => a.dataset.nav !== 'django-admin')"
        ".map(a => a.getAttribute('href'))"
    )
    return links


@pytest.mark.parametrize("role", list(RECORD_PAGES))
def test_every_main_page_has_no_serious_axe_violation(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None], role: str
) -> None:
    records = seeded(demo_staff)
    findings: list[str] = []

    def check(path: str) -> None:
        response = page.goto(path)
        assert response is not None and response.status == 200, path
        found = serious_violations(page)
        if found:
            findings.append(f"{path}:\n{describe(found)}")

    if role == "finance_maker":  # the sign-in page, before anyone is signed in
        check("/login/")
    sign_in(page, demo_staff[role].email)
    for path in [*navigation_pages(page), *(path_of(records) for path_of in RECORD_PAGES[role])]:
        check(path)
    assert not findings, "axe found serious or critical violations:\n" + "\n".join(findings)


BROKEN = """<!doctype html><html lang="en"><head><title>Broken</title></head><body><main>
<h1>Broken on purpose</h1><img src="/static/favicon.svg">
<form><input type="text" name="amount"><button></button></form></main></body></html>"""


def test_the_check_fails_on_a_page_with_known_violations(page: Page) -> None:
    page.goto("/login/")  # our origin and its CSP headers; then known violations in the DOM
    page.set_content(BROKEN)
    with pytest.raises(pytest.fail.Exception) as failed:
        assert_accessible(page, "the broken page")
    report = str(failed.value)
    for rule in ("image-alt", "label", "button-name"):
        assert f"- {rule} (critical)" in report, report
    assert "at img" in report and "at input" in report
