"""Maker-checker pages: the payout's live panel, the inbox with bulk approve, the policy page."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.states import payout_transition
from staff.changes import changes_apply_due
from staff.models import ChangeProposal, StaffUser
from tests.finance import make_draft, make_environment
from tests.identity import client_signed_in

S = PayoutStatus


def client_for(user: StaffUser) -> Client:
    return client_signed_in(user)  # past sign-in's second factor


def pending(staff: dict[str, StaffUser], maker: str = "maker", amount: str = "100.00") -> Payout:
    from gateway.models import Environment

    environment = Environment.objects.first() or make_environment()
    payout = make_draft(maker=staff[maker], environment=environment, amount=amount)
    payout_transition(payout, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=payout.maker)
    return Payout.objects.get(pk=payout.pk)


@pytest.mark.parametrize("who", ["maker", "approver", "admin"])
def test_payout_page_shows_approvals_and_only_allowed_actions(
    staff: dict[str, StaffUser], who: str
) -> None:
    payout = pending(staff)
    response = client_for(staff[who]).get(f"/payouts/{payout.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-testid="approvals-panel"' in html and 'data-testid="timeline"' in html
    assert ('data-testid="approve"' in html) == (who == "approver")


def test_maker_posting_approve_is_refused_by_the_service(staff: dict[str, StaffUser]) -> None:
    payout = pending(staff, maker="maker_approver")
    client = client_for(staff["maker_approver"])
    page = client.get(f"/payouts/{payout.pk}/").content.decode()
    assert 'data-testid="approve"' not in page and "someone else must approve" in page
    response = client.post(f"/payouts/{payout.pk}/approve/", HTTP_HX_REQUEST="true")
    assert "someone else must approve" in response.content.decode()
    payout.refresh_from_db()
    assert payout.status == S.PENDING_APPROVAL and not payout.approvals.exists()


def test_approve_and_reject_from_the_page(staff: dict[str, StaffUser]) -> None:
    first, second = pending(staff), pending(staff)
    client = client_for(staff["approver"])
    response = client.post(f"/payouts/{first.pk}/approve/", HTTP_HX_REQUEST="true")
    assert 'data-testid="payout-status"' in response.content.decode()
    first.refresh_from_db()
    assert first.status == S.APPROVED
    empty = client.post(f"/payouts/{second.pk}/reject/", {"reason": ""}, HTTP_HX_REQUEST="true")
    assert "This field is required." in empty.content.decode()
    client.post(f"/payouts/{second.pk}/reject/", {"reason": "Missing invoice"})
    second.refresh_from_db()
    assert second.status == S.REJECTED and second.rejection_reason == "Missing invoice"


def test_inbox_bulk_approve_confirms_once_and_shows_each_result(
    staff: dict[str, StaffUser],
) -> None:
    mine = pending(staff, maker="maker_approver")
    others = [pending(staff), pending(staff)]
    client = client_for(staff["maker_approver"])
    inbox = client.get("/payouts/approvals/").content.decode()
    assert f'data-payout="{others[0].pk}"' in inbox and f'data-payout="{mine.pk}"' not in inbox
    ids = [str(p.pk) for p in (*others, mine)]
    confirm = client.post("/payouts/approvals/approve/", {"payout": ids})
    assert 'data-testid="bulk-confirm"' in confirm.content.decode()
    assert Payout.objects.filter(status=S.APPROVED).count() == 0  # nothing before confirming
    results = client.post("/payouts/approvals/approve/", {"payout": ids, "confirm": "yes"})
    html = results.content.decode()
    assert html.count("badge-ok") == 2 and "refused" in html
    assert "someone else must approve" in html
    assert {p.status for p in Payout.objects.filter(pk__in=[p.pk for p in others])} == {S.APPROVED}


def test_inbox_page_costs_the_same_queries_for_one_or_many(staff: dict[str, StaffUser]) -> None:
    client = client_for(staff["approver"])
    pending(staff)
    client.get("/payouts/approvals/")
    with CaptureQueriesContext(connection) as one:
        client.get("/payouts/approvals/")
    for _ in range(5):
        pending(staff)
    with CaptureQueriesContext(connection) as many:
        client.get("/payouts/approvals/")
    assert len(many) == len(one)


@pytest.mark.parametrize("who", ["maker", "approver"])
def test_policy_page_is_for_admins_only(staff: dict[str, StaffUser], who: str) -> None:
    assert client_for(staff[who]).get("/payouts/approval-policy/").status_code == 403


def test_admin_previews_impact_then_publishes(staff: dict[str, StaffUser]) -> None:
    large = pending(staff, amount="15000.00")
    pending(staff, amount="50.00")
    client = client_for(staff["admin"])
    form = {"default_required": "1", "rules": "10000 USD * * 2", "note": "board decision"}
    preview = client.post("/payouts/approval-policy/", {**form, "action": "preview"})
    html = preview.content.decode()
    assert f"#{large.pk}" in html and 'data-testid="impact"' in html
    published = client.post("/payouts/approval-policy/", {**form, "action": "publish"})
    # An admin change (staff.changes): proposed; the only admin here waits it out.
    assert "Proposed" in published.content.decode()
    assert pending(staff, amount="15000.00").approvals_required == 1
    proposal = ChangeProposal.objects.get(kind="payouts.approval_policy")
    assert changes_apply_due(now=proposal.apply_after) == 1
    large.refresh_from_db()
    assert large.approvals_required == 1  # submitted before the change: keeps its count
    later = pending(staff, amount="15000.00")
    assert later.approvals_required == 2
    bad = client.post("/payouts/approval-policy/", {**form, "rules": "ten USD", "action": "x"})
    assert "five values" in bad.content.decode()
    assert later.approval_policy is not None and later.approval_policy.rules.get().min_amount == (
        Decimal("10000")
    )


def test_dashboard_shows_waiting_for_me_and_my_returned_drafts(
    staff: dict[str, StaffUser], django_capture_on_commit_callbacks: Any
) -> None:
    from django.core import mail

    from payouts.approval.services import payout_reject

    with django_capture_on_commit_callbacks(execute=True):
        first, second = pending(staff), pending(staff)
    approver = client_for(staff["approver"]).get("/").content.decode()
    assert "2 payouts waiting for your approval" in approver
    assert any("waits for approval" in m.body for m in mail.outbox)
    with django_capture_on_commit_callbacks(execute=True):
        payout_reject(payout=first, by=staff["approver"], reason="Wrong invoice")
    assert any("Wrong invoice" in m.body and m.to == [staff["maker"].email] for m in mail.outbox)
    maker = client_for(staff["maker"])
    page = maker.get("/").content.decode()
    assert "rejected: Wrong invoice" in page
    maker.post("/payouts/notifications/read/")
    assert "rejected: Wrong invoice" not in maker.get("/").content.decode()
    assert second.status == S.PENDING_APPROVAL
