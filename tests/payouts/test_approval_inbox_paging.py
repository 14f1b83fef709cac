"""The approval inbox as a list (issue 21): paged, filtered and ordered on the page and in the API,
the same people reach it as before, and a page costs the same queries for 10 rows or many."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.html import escape

from accounts.models import Recipient
from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.approval.forms import InboxFilterForm
from payouts.approval.selectors import INBOX_PAGE_SIZE, SCOPE_MINE, waiting_count
from payouts.models import Approval, Payout, PayoutStatus
from staff.models import StaffUser
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import client_signed_in

S = PayoutStatus


@pytest.fixture
def environment(staff: dict[str, StaffUser]) -> Environment:
    where = make_environment()
    for person in staff.values():
        environment_switch(user=person, environment=where)
    return where


def waiting(
    environment: Environment, maker: StaffUser, count: int, **fields: object
) -> list[Payout]:
    """`count` payouts waiting for approval (one directory: an account and a recipient),
    amounts 1.00 … count.00, each submitted a minute after the one before."""
    first = make_draft(maker=maker, environment=environment)
    start = timezone.now() - timedelta(days=1)
    rows = [
        Payout(
            environment=environment,
            maker=maker,
            virtual_account=first.virtual_account,
            recipient=first.recipient,
            amount=Decimal(index + 1),
            reference=f"inv-{index + 1}",
            status=S.PENDING_APPROVAL,
            submitted_at=start + timedelta(minutes=index),
            **fields,
        )
        for index in range(count)
    ]
    first.delete()
    return Payout.objects.bulk_create(rows)


def ids(html: str) -> list[int]:
    import re

    return [int(pk) for pk in re.findall(r'data-payout="(\d+)"', html)]


def api_client(user: StaffUser) -> Client:
    """The API as the person's signed-in session (a token's scopes would narrow what they may
    approve: staff.api_tokens)."""
    return client_signed_in(user)


def test_the_inbox_shows_a_page_at_a_time_with_the_total(
    staff: dict[str, StaffUser], environment: Environment
) -> None:
    rows = waiting(environment, staff["maker"], INBOX_PAGE_SIZE + 7)
    client = client_signed_in(staff["approver"])
    first = client.get("/payouts/approvals/").content.decode()
    assert ids(first) == [p.pk for p in rows[:INBOX_PAGE_SIZE]]  # oldest submission first
    assert f"{INBOX_PAGE_SIZE + 7} payouts waiting for you" in first
    assert 'rel="next"' in first and "page=2" in first
    second = client.get("/payouts/approvals/", {"page": 2}).content.decode()
    assert ids(second) == [p.pk for p in rows[INBOX_PAGE_SIZE:]]
    anyone = client.get("/payouts/approvals/", {"scope": "anyone", "page": 2}).content.decode()
    assert ids(anyone) == [p.pk for p in rows[INBOX_PAGE_SIZE:]]
    assert waiting_count(staff["approver"], environment) == INBOX_PAGE_SIZE + 7


def test_the_inbox_filters_and_orders_and_keeps_them_across_pages(
    staff: dict[str, StaffUser], environment: Environment
) -> None:
    rows = waiting(environment, staff["maker"], 60)
    other = waiting(environment, staff["maker_approver"], 3)
    client = client_signed_in(staff["approver"])
    largest = client.get("/payouts/approvals/", {"sort": "-amount"}).content.decode()
    assert ids(largest)[:3] == [rows[59].pk, rows[58].pk, rows[57].pk]
    ranged = client.get(
        "/payouts/approvals/", {"amount_min": "10", "amount_max": "12", "sort": "-submitted"}
    ).content.decode()
    newest_first = sorted((*rows, *other), key=lambda p: (p.submitted_at, p.pk), reverse=True)
    assert ids(ranged) == [p.pk for p in newest_first if Decimal(10) <= p.amount <= Decimal(12)]
    searched = client.get("/payouts/approvals/", {"q": "inv-42"}).content.decode()
    assert ids(searched) == [rows[41].pk]
    by_maker = client.get(
        "/payouts/approvals/", {"maker": str(staff["maker_approver"].pk), "scope": "anyone"}
    ).content.decode()
    assert sorted(ids(by_maker)) == sorted(p.pk for p in other)
    paged = client.get("/payouts/approvals/", {"amount_min": "5"}).content.decode()
    assert "amount_min=5&amp;page=2" in paged  # the filter is kept on the next page's link
    bad = client.get("/payouts/approvals/", {"amount_min": "ten"})
    refusal = InboxFilterForm({"amount_min": "ten"}, makers=[]).errors["amount_min"][0]
    assert bad.status_code == 200 and escape(refusal) in bad.content.decode()


def test_mine_keeps_only_the_chain_steps_the_person_may_fill(
    staff: dict[str, StaffUser], environment: Environment
) -> None:
    admin_step = [{"role": "admin", "count": 1}]
    for_admin = waiting(environment, staff["maker"], 3, approval_chain=admin_step)
    for_anyone = waiting(environment, staff["maker"], 2)
    approved = for_anyone[0]
    Approval.objects.create(payout=approved, approver=staff["approver"], round=1)
    approver = client_signed_in(staff["approver"]).get("/payouts/approvals/").content.decode()
    assert ids(approver) == [for_anyone[1].pk]
    admin = client_signed_in(staff["admin"]).get("/payouts/approvals/").content.decode()
    assert set(ids(admin)) >= {p.pk for p in for_admin}
    everyone = client_signed_in(staff["approver"]).get("/payouts/approvals/?scope=anyone")
    assert len(ids(everyone.content.decode())) == 5
    assert waiting_count(staff["approver"], environment) == 1


def test_mine_leaves_out_the_payouts_to_a_recipient_the_person_created(
    staff: dict[str, StaffUser], environment: Environment
) -> None:
    theirs = waiting(environment, staff["maker"], 2)  # one recipient for both
    others = waiting(environment, staff["maker"], 1)  # another recipient
    Recipient.objects.filter(pk=theirs[0].recipient_id).update(created_by=staff["approver"])
    client = client_signed_in(staff["approver"])
    assert ids(client.get("/payouts/approvals/").content.decode()) == [others[0].pk]
    assert [row["id"] for row in api_client(staff["approver"]).get("/api/v1/approvals").json()] == [
        others[0].pk
    ]
    assert waiting_count(staff["approver"], environment) == 1
    anyone = client.get("/payouts/approvals/?scope=anyone").content.decode()
    assert sorted(ids(anyone)) == sorted(p.pk for p in (*theirs, *others))
    second = client_signed_in(staff["approver2"]).get("/payouts/approvals/").content.decode()
    assert sorted(ids(second)) == sorted(p.pk for p in (*theirs, *others))


def test_the_api_pages_filters_and_orders_the_inbox(
    staff: dict[str, StaffUser], environment: Environment
) -> None:
    rows = waiting(environment, staff["maker"], 60)
    api = api_client(staff["approver"])
    first = api.get("/api/v1/approvals").json()
    assert [item["id"] for item in first] == [p.pk for p in rows[:50]]
    rest = api.get("/api/v1/approvals", {"offset": 50, "limit": 50}).json()
    assert [item["id"] for item in rest] == [p.pk for p in rows[50:]]
    largest = api.get("/api/v1/approvals", {"sort": "-amount", "limit": 2}).json()
    assert [item["id"] for item in largest] == [rows[59].pk, rows[58].pk]
    ranged = api.get(
        "/api/v1/approvals", {"scope": "anyone", "amount_min": "3", "amount_max": "4"}
    ).json()
    assert [item["id"] for item in ranged] == [rows[2].pk, rows[3].pk]
    assert [i["id"] for i in api.get("/api/v1/approvals", {"q": "inv-7"}).json()] == [rows[6].pk]
    bad = api.get("/api/v1/approvals", {"sort": "price"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "sort"
    too_many = api.get("/api/v1/approvals", {"limit": 201})
    assert too_many.status_code == 400


@pytest.mark.parametrize(
    ("role", "allowed"),
    [
        ("finance_maker", True),
        ("finance_approver", True),
        ("compliance", True),
        ("auditor", True),
        ("", False),  # signed in, no role
    ],
)
def test_who_reads_the_inbox_is_unchanged(
    staff: dict[str, StaffUser], environment: Environment, role: str, allowed: bool
) -> None:
    waiting(environment, staff["maker"], 2)
    person = (
        make_staff(role) if role else StaffUser.objects.create_user("none@pay.test", "pw-x-123")
    )
    environment_switch(user=person, environment=environment)
    page = client_signed_in(person).get("/payouts/approvals/?scope=anyone")
    api = api_client(person).get("/api/v1/approvals", {"scope": "anyone"})
    assert (page.status_code == 200) is allowed and (api.status_code == 200) is allowed
    if allowed:
        assert len(ids(page.content.decode())) == 2 and len(api.json()) == 2


@pytest.mark.parametrize(
    "url",
    [
        "/payouts/approvals/",
        "/payouts/approvals/?scope=anyone",
        "/payouts/approvals/?scope=anyone&sort=-amount&page=2",
        "/api/v1/approvals",
        "/api/v1/approvals?scope=anyone&offset=5",
    ],
)
def test_an_inbox_page_costs_the_same_queries_for_10_rows_or_many(
    staff: dict[str, StaffUser], environment: Environment, url: str
) -> None:
    approver = staff["approver"]
    client = api_client(approver) if url.startswith("/api") else client_signed_in(approver)

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        return len(queries)

    waiting(environment, staff["maker"], 10)
    count()  # warm the session, permission and token caches
    ten = count()
    for payout in waiting(environment, staff["maker"], 2 * INBOX_PAGE_SIZE + 20):
        Approval.objects.create(payout=payout, approver=staff["approver2"], round=1)
    assert count() == ten


def test_scope_mine_is_the_default_and_other_scopes_are_refused_by_the_api(
    staff: dict[str, StaffUser], environment: Environment
) -> None:
    waiting(environment, staff["approver"], 1)  # the approver's own: never theirs to approve
    client = client_signed_in(staff["approver"])
    assert ids(client.get("/payouts/approvals/").content.decode()) == []
    assert len(ids(client.get("/payouts/approvals/?scope=anyone").content.decode())) == 1
    assert api_client(staff["approver"]).get("/api/v1/approvals?scope=all").status_code == 400
    assert SCOPE_MINE == "mine"
