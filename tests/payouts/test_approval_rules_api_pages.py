"""Richer approval rules through the API and the pages: the policy read, its draft preview and
publication, withdrawing an approval; per role, with the one error shape."""

from __future__ import annotations

import json
from decimal import Decimal as D
from typing import Any

import pytest
from django.test import Client

from payouts.approval.policy import approval_policy_publish
from payouts.approval.rules import ChainStep, RuleSpec
from payouts.approval.services import payout_approve
from payouts.models import ApprovalPolicy, ChangeSource, Payout, PayoutStatus
from payouts.states import payout_transition
from staff.changes import change_approve
from staff.models import ChangeProposal, StaffUser
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import client_signed_in, stepped_up

S = PayoutStatus
DRAFT_POLICY = {
    "default_required": 1,
    "rules": [
        {
            "min_amount": "10000",
            "currency": "USD",
            "chain": [{"role": "finance_approver", "count": 1}, {"role": "admin", "count": 1}],
        },
        {"channel": "api", "required_approvals": 2},
    ],
    "limits": [{"subject": "maker", "amount": "20000.00", "currency": "USD", "days": 7}],
    "recipient_approver_roles": ["finance_approver"],
    "note": "board decision",
}


def post(client: Client, path: str, body: dict[str, Any] | None = None) -> Any:
    return client.post(
        f"/api/v1{path}", data=json.dumps(body or {}), content_type="application/json"
    )


def pending(staff: dict[str, StaffUser], amount: str = "100.00") -> Payout:
    from gateway.models import Environment

    environment = Environment.objects.first() or make_environment()
    payout = make_draft(
        maker=staff["maker"],
        environment=environment,
        amount=amount,
        preview_recipient_amount=D(amount),
    )
    payout_transition(payout, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=staff["maker"])
    return Payout.objects.get(pk=payout.pk)


@pytest.mark.parametrize(("who", "status"), [("maker", 403), ("approver", 403), ("admin", 200)])
def test_policy_read_per_role(staff: dict[str, StaffUser], who: str, status: int) -> None:
    approval_policy_publish(
        by=staff["admin"],
        default_required=1,
        rules=[RuleSpec(required_approvals=2, chain=(ChainStep("finance_approver", 2),))],
    )
    response = client_signed_in(staff[who]).get("/api/v1/approval-policy")
    assert response.status_code == status, response.content
    if status == 200:
        body = response.json()
        assert body["version"] == 1
        assert body["rules"][0]["chain"] == [{"role": "finance_approver", "count": 2}]
    else:
        assert response.json()["code"] == "permission_denied"


@pytest.mark.parametrize(("who", "status"), [("maker", 403), ("approver", 403), ("admin", 200)])
def test_policy_preview_per_role_writes_nothing(
    staff: dict[str, StaffUser], who: str, status: int
) -> None:
    big = pending(staff, "15000.00")
    response = post(client_signed_in(staff[who]), "/approval-policy/preview", DRAFT_POLICY)
    assert response.status_code == status, response.content
    if status == 200:
        (row,) = response.json()
        assert row["payout_id"] == big.pk and row["changed"] is True
        assert (row["required_now"], row["required_under_draft"]) == (1, 2)
        assert row["chain_under_draft"][1] == {"role": "admin", "count": 1}
        assert row["limit_exceeded"] is None
    assert not ApprovalPolicy.objects.exists()


@pytest.mark.parametrize(("who", "status"), [("maker", 403), ("approver", 403), ("admin", 202)])
def test_policy_publish_per_role(staff: dict[str, StaffUser], who: str, status: int) -> None:
    """Publishing is an admin change: proposed here (202), published once another admin approves
    it, with every part of the draft (chains, limits, recipient approver roles) kept."""
    response = post(client_signed_in(staff[who]), "/approval-policy", DRAFT_POLICY)
    assert response.status_code == status, response.content
    assert not ApprovalPolicy.objects.exists()
    if status != 202:
        return
    change = response.json()
    assert change["state"] == "pending"
    second_admin = make_staff("admin")
    approved = post(client_signed_in(second_admin), f"/changes/{change['id']}/approve")
    assert approved.status_code == 200, approved.content
    body = client_signed_in(staff["admin"]).get("/api/v1/approval-policy").json()
    assert body["version"] == 1 and body["limits"][0]["amount"] == "20000.00"
    assert body["recipient_approver_roles"] == ["finance_approver"]
    assert body["rules"][0]["required_approvals"] == 2
    chains = [rule["chain"] for rule in body["rules"] if rule["chain"]]
    assert chains == [[{"role": "finance_approver", "count": 1}, {"role": "admin", "count": 1}]]
    assert ApprovalPolicy.objects.get().created_by == staff["admin"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"rules": [{"chain": [{"role": "compliance", "count": 1}]}]}, "rules"),
        ({"limits": [{"subject": "team", "amount": "1", "currency": "USD"}]}, "limits"),
        ({"limits": [{"subject": "maker", "amount": "1e3", "currency": "USD"}]}, "limits.0.amount"),
        ({"rules": [{"chain": [{"role": "admin", "count": 0}]}]}, "rules.0.chain.0.count"),
    ],
)
def test_a_bad_policy_is_a_400_on_its_field(
    staff: dict[str, StaffUser], body: dict[str, Any], field: str
) -> None:
    client = client_signed_in(staff["admin"])
    for path in ("/approval-policy/preview", "/approval-policy"):
        response = post(client, path, body)
        assert response.status_code == 400, response.content
        assert any(e["field"].startswith(field) for e in response.json()["errors"]), response.json()
    assert not ApprovalPolicy.objects.exists()


@pytest.mark.parametrize(
    ("who", "status", "code"),
    [
        ("maker", 403, "permission_denied"),  # the auth step
        ("approver2", 409, "no_approval"),  # may approve, has nothing to withdraw
        ("approver", 200, None),
    ],
)
def test_withdraw_endpoint_per_role(
    staff: dict[str, StaffUser], who: str, status: int, code: str | None
) -> None:
    payout = pending(staff)
    payout_approve(payout=payout, by=staff["approver"])
    response = post(
        client_signed_in(staff[who]),
        f"/payouts/{payout.pk}/approval/withdraw",
        {"reason": "wrong invoice"},
    )
    assert response.status_code == status, response.content
    if code:
        assert response.json()["code"] == code
    else:
        assert response.json()["status"] == "pending_approval"


def test_withdraw_needs_a_reason(staff: dict[str, StaffUser]) -> None:
    payout = pending(staff)
    payout_approve(payout=payout, by=staff["approver"])
    response = post(
        client_signed_in(staff["approver"]),
        f"/payouts/{payout.pk}/approval/withdraw",
        {"reason": ""},
    )
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "reason"


def test_an_admin_approves_the_admin_step_through_the_api(staff: dict[str, StaffUser]) -> None:
    approval_policy_publish(
        by=staff["admin"],
        default_required=1,
        rules=[
            RuleSpec(
                required_approvals=2,
                chain=(ChainStep("finance_approver", 1), ChainStep("admin", 1)),
            )
        ],
    )
    payout = pending(staff)
    payout_approve(payout=payout, by=staff["approver"])
    response = post(client_signed_in(staff["admin"]), f"/payouts/{payout.pk}/approve")
    assert response.status_code == 200, response.content
    assert response.json()["complete"] is True


# --- Pages ------------------------------------------------------------------------------------


def test_the_policy_page_previews_a_draft_with_chains_and_limits(
    staff: dict[str, StaffUser],
) -> None:
    big = pending(staff, "15000.00")
    client = client_signed_in(staff["admin"])
    form = {
        "default_required": "1",
        "rules": "10000 USD * * finance_approver:1>admin:1\n0 * * * 2 channel=api country=MX",
        "limits": "maker 7d 12000 USD",
        "note": "",
        "action": "preview",
    }
    html = client.post("/payouts/approval-policy/", form).content.decode()
    assert 'data-testid="impact"' in html and f"#{big.pk}" in html
    assert "1 holder of the Finance approver role, then 1 holder of the Admin role" in html
    assert "maker&#x27;s 7-day rolling limit of 12000 USD" in html
    assert not ApprovalPolicy.objects.exists()
    client.post("/payouts/approval-policy/", {**form, "action": "publish"})
    assert not ApprovalPolicy.objects.exists()  # proposed: another admin approves it
    (proposal,) = ChangeProposal.objects.filter(kind="payouts.approval_policy")
    change_approve(proposal=proposal, by=stepped_up(make_staff("admin")))
    policy = ApprovalPolicy.objects.get()
    rule_lines = client.get("/payouts/approval-policy/").content.decode()
    assert "finance_approver:1&gt;admin:1" in rule_lines and "country=MX channel=api" in rule_lines
    assert "maker 7d 12000 USD" in rule_lines
    assert policy.rules.count() == 2


@pytest.mark.parametrize(
    ("rules", "limits", "error"),
    [
        ("0 * * * nobody:1", "", "a role that approves payouts"),
        ("0 * * * 2 colour=red", "", "conditions are key=value"),
        ("", "maker week 10 USD", "subject (maker, recipient)"),
    ],
)
def test_the_policy_page_says_what_is_wrong(
    staff: dict[str, StaffUser], rules: str, limits: str, error: str
) -> None:
    form = {"default_required": "1", "rules": rules, "limits": limits, "action": "publish"}
    html = client_signed_in(staff["admin"]).post("/payouts/approval-policy/", form)
    assert error in html.content.decode()
    assert not ApprovalPolicy.objects.exists()


@pytest.mark.parametrize(("who", "ok"), [("approver", True), ("approver2", False)])
def test_the_payout_page_offers_withdraw_to_whoever_approved(
    staff: dict[str, StaffUser], who: str, ok: bool
) -> None:
    payout = pending(staff)
    payout_approve(payout=payout, by=staff["approver"])
    client = client_signed_in(staff[who])
    page = client.get(f"/payouts/{payout.pk}/").content.decode()
    assert ('data-testid="withdraw-approval"' in page) == ok
    client.post(f"/payouts/{payout.pk}/withdraw-approval/", {"reason": "second thoughts"})
    payout.refresh_from_db()
    assert (payout.status == S.PENDING_APPROVAL) == ok
    assert payout.approvals.filter(voided_at__isnull=True).exists() != ok


def test_my_inbox_lists_what_my_role_can_approve_at_the_current_step(
    staff: dict[str, StaffUser],
) -> None:
    approval_policy_publish(
        by=staff["admin"],
        default_required=1,
        rules=[
            RuleSpec(
                required_approvals=2,
                min_amount=D("10000"),
                chain=(ChainStep("finance_approver", 1), ChainStep("admin", 1)),
            )
        ],
    )
    big = pending(staff, "15000.00")
    small = pending(staff, "10.00")

    def mine(who: str) -> list[int]:
        response = client_signed_in(staff[who]).get("/api/v1/approvals?scope=mine")
        assert response.status_code == 200, response.content
        return sorted(row["id"] for row in response.json())

    assert (mine("approver2"), mine("admin")) == ([big.pk, small.pk], [])
    payout_approve(payout=big, by=staff["approver"])
    assert (mine("approver2"), mine("admin")) == ([small.pk], [big.pk])
    page = client_signed_in(staff["admin"]).get("/payouts/approvals/").content.decode()
    assert f"#{big.pk}" in page or f"/payouts/{big.pk}/" in page


def test_withdrawing_on_the_page_without_a_reason_says_so_on_the_field(
    staff: dict[str, StaffUser],
) -> None:
    payout = pending(staff)
    payout_approve(payout=payout, by=staff["approver"])
    client = client_signed_in(staff["approver"])
    html = client.post(
        f"/payouts/{payout.pk}/withdraw-approval/", {"reason": ""}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert 'data-testid="withdraw-approval"' in html and "This field is required" in html
    payout.refresh_from_db()
    assert payout.status == S.APPROVED


@pytest.mark.parametrize("channel", ["page", "api"])
def test_a_submission_over_a_limit_is_refused_on_the_page_and_the_api(
    staff: dict[str, StaffUser], channel: str
) -> None:
    from payouts.approval.rules import LimitSpec
    from tests.payouts.test_approval_chains import _ready

    approval_policy_publish(
        by=staff["admin"],
        default_required=1,
        rules=[],
        limits=[LimitSpec("maker", D("50.00"), "USD", days=0)],
    )
    from gateway.models import Environment

    environment = Environment.objects.first() or make_environment()
    payout = _ready(make_draft(maker=staff["maker"], environment=environment, amount="60.00"))
    client = client_signed_in(staff["maker"])
    if channel == "page":
        html = client.post(f"/payouts/{payout.pk}/submit/", {}).content.decode()
        assert "maker&#x27;s daily limit of 50.00 USD" in html and "50.00 USD is left" in html
    else:
        response = post(client, f"/payouts/{payout.pk}/submit?environment={environment.name}", {})
        assert response.status_code == 409, response.content
        body = response.json()
        assert body["code"] == "limit_exceeded" and body["errors"][0]["field"] == "amount"
    payout.refresh_from_db()
    assert payout.status == S.DRAFT and payout.channel == ""
