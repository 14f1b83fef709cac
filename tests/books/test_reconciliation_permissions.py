"""Reconciliation's pages and API per role: finance reads and acts, the auditor reads only,
compliance sees nothing; and the queue's filters, actions and audit trail (no upstream needed)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client

from accounts.models import VirtualAccount
from books.models import BalanceAdjustment
from books.reconciliation.exception_actions import exception_explain, exception_set_state
from books.reconciliation.models import (
    ExceptionComment,
    ExceptionKind,
    ExceptionState,
    ReconciliationException,
    ReconciliationRun,
    RunState,
)
from gateway.models import Environment
from gateway.services.environments import environment_switch
from staff.errors import ServiceError
from staff.models import AuditEntry, StaffUser
from tests.finance import make_environment, make_staff
from tests.identity import client_signed_in
from users.models import EndUser

pytestmark = pytest.mark.django_db

READERS = ["finance_maker", "finance_approver", "auditor"]
ACTORS = ["finance_maker", "finance_approver"]


@pytest.fixture
def environment() -> Environment:
    return make_environment()


@pytest.fixture
def account(environment: Environment) -> VirtualAccount:
    user = EndUser.objects.create(
        environment=environment, upstream_id="u-1", email="a@example.com", country="US"
    )
    return VirtualAccount.objects.create(
        environment=environment, end_user=user, upstream_id="va-1", mode="fiat", status="active"
    )


@pytest.fixture
def run(environment: Environment) -> ReconciliationRun:
    from django.utils import timezone

    now = timezone.now()
    return ReconciliationRun.objects.create(
        environment=environment,
        window_start=now - timezone.timedelta(days=1),
        window_end=now,
        state=RunState.COMPLETED,
        calls_spent=2,
    )


@pytest.fixture
def item(run: ReconciliationRun, account: VirtualAccount) -> ReconciliationException:
    return ReconciliationException.objects.create(
        environment=run.environment,
        kind=ExceptionKind.BALANCE_DIFFERS,
        key=f"va:{account.pk}",
        virtual_account=account,
        ours={"closing": "100.00"},
        theirs={"available_balance": "87.66", "currency": "USD"},
        difference=Decimal("-12.34"),
        summary="Balance is 87.66 USD upstream, 100.00 USD by PayOps's ledger (off by -12.34)",
        first_seen_run=run,
        last_seen_run=run,
    )


def _client(user: StaffUser, environment: Environment) -> Client:
    environment_switch(user=user, environment=environment)
    return client_signed_in(user)


@pytest.mark.parametrize("role", READERS)
def test_finance_and_the_auditor_read_every_page_and_endpoint(
    role: str, environment: Environment, run: ReconciliationRun, item: ReconciliationException
) -> None:
    client = _client(make_staff(role), environment)
    for url in (
        "/books/reconciliation/",
        f"/books/reconciliation/runs/{run.pk}/",
        "/books/exceptions/",
        f"/books/exceptions/{item.pk}/",
    ):
        assert client.get(url).status_code == 200, url
    runs = client.get("/api/v1/reconciliation/runs").json()
    assert runs["count"] == 1 and runs["items"][0]["calls_spent"] == 2
    assert client.get(f"/api/v1/reconciliation/runs/{run.pk}").json()["state"] == "completed"
    queue = client.get("/api/v1/reconciliation/exceptions?state=open").json()
    assert [row["id"] for row in queue["items"]] == [item.pk]
    detail = client.get(f"/api/v1/reconciliation/exceptions/{item.pk}").json()
    assert detail["kind"] == "balance_differs" and detail["difference"] == "-12.340000"
    page = client.get(f"/books/exceptions/{item.pk}/").content
    assert (b'data-testid="actions"' in page) is (role in ACTORS)


@pytest.mark.parametrize("role", ["auditor", "compliance"])
def test_the_auditor_and_compliance_cannot_act(
    role: str, environment: Environment, item: ReconciliationException
) -> None:
    client = _client(make_staff(role), environment)
    base = f"/api/v1/reconciliation/exceptions/{item.pk}"
    for path, body in (
        ("/comments", {"body": "x"}),
        ("/assign", {"owner_id": None}),
        ("/state", {"state": "investigating"}),
        ("/explain", {"reason": "x"}),
        ("/adopt", {}),
        ("/refetch", {}),
    ):
        answer = client.post(base + path, body, content_type="application/json")
        assert answer.status_code == 403, path
    assert (
        client.post("/api/v1/reconciliation/runs", {}, content_type="application/json").status_code
        == 403
    )
    assert client.post(f"/books/exceptions/{item.pk}/comment/", {"body": "x"}).status_code == 403
    assert client.post("/books/reconciliation/start/").status_code == 403
    assert not ExceptionComment.objects.exists()


def test_compliance_reads_nothing(
    environment: Environment, run: ReconciliationRun, item: ReconciliationException
) -> None:
    client = _client(make_staff("compliance"), environment)
    assert client.get("/books/reconciliation/").status_code == 403
    assert client.get("/books/exceptions/").status_code == 403
    assert client.get(f"/books/exceptions/{item.pk}/").status_code == 403
    assert client.get("/api/v1/reconciliation/runs").status_code == 403
    assert client.get("/api/v1/reconciliation/exceptions").status_code == 403


@pytest.mark.parametrize("role", ACTORS)
def test_finance_works_an_item_through_the_api_each_step_audited(
    role: str, environment: Environment, item: ReconciliationException, account: VirtualAccount
) -> None:
    person = make_staff(role)
    client = _client(person, environment)
    base = f"/api/v1/reconciliation/exceptions/{item.pk}"
    owner = client.post(base + "/assign", {"owner_id": person.pk}, content_type="application/json")
    assert owner.status_code == 200 and owner.json()["owner"] == person.email
    said = client.post(
        base + "/comments", {"body": "Asking the bank"}, content_type="application/json"
    )
    assert [c["body"] for c in said.json()["comments"]] == ["Asking the bank"]
    moved = client.post(
        base + "/state", {"state": "investigating"}, content_type="application/json"
    )
    assert moved.json()["state"] == "investigating"
    # Resolving needs a reason.
    bare = client.post(base + "/state", {"state": "resolved"}, content_type="application/json")
    assert bare.status_code == 400 and bare.json()["code"] == "reason_required"
    explained = client.post(
        base + "/explain", {"reason": "Monthly account fee"}, content_type="application/json"
    )
    assert explained.status_code == 200 and explained.json()["state"] == "resolved"
    adjustment = BalanceAdjustment.objects.get()
    assert adjustment.amount == Decimal("-12.34") and adjustment.virtual_account == account
    assert adjustment.recorded_by == person
    actions = list(
        AuditEntry.objects.filter(
            target_id=str(item.pk), target_type="books.reconciliationexception"
        )
        .order_by("seq")
        .values_list("action", flat=True)
    )
    assert actions == [
        "books.exception_assigned",
        "books.exception_commented",
        "books.exception_state_set",
        "books.exception_explained",
    ]
    # A resolved item takes no more actions (409); a payout-only action is refused on a balance.
    again = client.post(base + "/state", {"state": "open"}, content_type="application/json")
    assert again.status_code == 409
    adopt = client.post(base + "/adopt", {}, content_type="application/json")
    assert adopt.status_code == 400 and adopt.json()["code"] == "not_adoptable"


def test_the_page_actions_work_and_the_queue_filters(
    environment: Environment, item: ReconciliationException, run: ReconciliationRun
) -> None:
    maker = make_staff("finance_maker")
    client = _client(maker, environment)
    assert (
        client.post(f"/books/exceptions/{item.pk}/comment/", {"body": "On it"}).status_code == 302
    )
    assert (
        client.post(f"/books/exceptions/{item.pk}/assign/", {"owner": str(maker.pk)}).status_code
        == 302
    )
    item.refresh_from_db()
    assert item.owner == maker and item.comments.get().body == "On it"
    mine = client.get(f"/books/exceptions/?owner={maker.pk}&state=unresolved").content
    assert f'data-exception="{item.pk}"'.encode() in mine
    resolved = client.get("/books/exceptions/?state=resolved").content
    assert f'data-exception="{item.pk}"'.encode() not in resolved
    other_kind = client.get("/books/exceptions/?kind=status_differs").content
    assert f'data-exception="{item.pk}"'.encode() not in other_kind


def test_an_explained_balance_needs_a_reason_and_services_check_permissions(
    item: ReconciliationException,
) -> None:
    with pytest.raises(ServiceError):
        exception_explain(item=item, reason="  ", by=make_staff("finance_maker"))
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        exception_set_state(item=item, state=ExceptionState.INVESTIGATING, by=make_staff("auditor"))
    assert not BalanceAdjustment.objects.exists()


def test_the_queue_and_the_runs_cost_the_same_queries_whatever_their_length(
    environment: Environment, item: ReconciliationException, run: ReconciliationRun
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    maker = make_staff("finance_maker")
    client = _client(maker, environment)

    def cost(url: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        return len(queries)

    urls = (
        "/books/exceptions/?state=",
        "/books/reconciliation/",
        "/api/v1/reconciliation/exceptions",
    )
    before = [cost(url) for url in urls]
    for n in range(6):
        ReconciliationException.objects.create(
            environment=environment,
            kind=ExceptionKind.MISSING_IN_PAYOPS,
            key=f"p-{n}",
            upstream_id=f"p-{n}",
            summary="x",
            owner=maker,
            first_seen_run=run,
            last_seen_run=run,
        )
        ReconciliationRun.objects.create(
            environment=environment,
            window_start=run.window_start,
            window_end=run.window_end,
            state=RunState.COMPLETED,
            started_by=maker,
        )
    assert [cost(url) for url in urls] == before


@pytest.mark.parametrize("role", ACTORS)
def test_finance_starts_a_run_over_the_api_once_per_scope(
    role: str, environment: Environment, account: VirtualAccount
) -> None:
    person = make_staff(role)
    client = _client(person, environment)
    started = client.post(
        "/api/v1/reconciliation/runs",
        {"virtual_account_id": account.pk},
        content_type="application/json",
    )
    assert started.status_code == 201, started.content
    body = started.json()
    assert body["state"] == "running" and body["phase"] == "payouts"
    assert body["virtual_account_id"] == account.pk and body["started_by"] == person.email
    assert AuditEntry.objects.filter(action="books.reconciliation_started", actor=person).exists()
    again = client.post(
        "/api/v1/reconciliation/runs",
        {"virtual_account_id": account.pk},
        content_type="application/json",
    )
    assert again.status_code == 409 and again.json()["code"] == "run_open"
    unknown = client.post(
        "/api/v1/reconciliation/runs",
        {"virtual_account_id": 999999},
        content_type="application/json",
    )
    assert unknown.status_code == 400
