"""Pages and API per role: makers write their own drafts, approvers and compliance only read."""

from __future__ import annotations

import csv
import io
from decimal import Decimal as D

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.models import Payout
from staff.models import StaffUser
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db

READERS = ["finance_maker", "finance_approver", "compliance", "admin"]


@pytest.fixture
def environment() -> Environment:
    return make_environment()


def _client(user: StaffUser, environment: Environment) -> Client:
    environment_switch(user=user, environment=environment)
    return client_signed_in(user)


@pytest.fixture
def draft(environment: Environment) -> Payout:
    return make_draft(maker=make_staff("finance_maker"), environment=environment)


@pytest.mark.parametrize("role", READERS)
def test_finance_and_compliance_read_the_list_detail_and_api(
    role: str, environment: Environment, draft: Payout
) -> None:
    client = _client(make_staff(role), environment)
    assert client.get("/payouts/").status_code == 200
    page = client.get(f"/payouts/{draft.pk}/")
    assert page.status_code == 200
    assert b"Edit draft" not in page.content  # not theirs: no edit controls
    assert client.get("/api/v1/payouts").status_code == 200
    assert client.get(f"/api/v1/payouts/{draft.pk}").json()["status"] == "draft"
    # Quotes are finance's working material only.
    finance = role in ("finance_maker", "finance_approver")
    assert client.get("/quotes/").status_code == (200 if finance else 403)
    assert client.get("/api/v1/quotes").status_code == (200 if finance else 403)


def test_staff_without_finance_or_compliance_view_read_nothing(
    environment: Environment, draft: Payout
) -> None:
    nobody = StaffUser.objects.create_user("norole@payops.test", "pw-not-secret-123")
    client = _client(nobody, environment)
    assert client.get("/payouts/").status_code == 403
    assert client.get(f"/payouts/{draft.pk}/").status_code == 403
    assert client.get("/api/v1/payouts").status_code == 403
    assert client.get("/quotes/").status_code == 403


@pytest.mark.parametrize("role", ["finance_maker", "finance_approver", "compliance"])
def test_nobody_but_the_maker_edits_deletes_or_submits(
    role: str, environment: Environment, draft: Payout
) -> None:
    client = _client(make_staff(role), environment)
    assert client.get(f"/payouts/{draft.pk}/edit/").status_code == 403
    assert client.post(f"/payouts/{draft.pk}/delete/").status_code == 403
    assert client.post(f"/payouts/{draft.pk}/submit/").status_code == 403
    api = client.patch(
        f"/api/v1/payouts/{draft.pk}", {"memo": "x"}, content_type="application/json"
    )
    assert api.status_code == 403 and api.json()["code"] == "permission_denied"
    assert client.delete(f"/api/v1/payouts/{draft.pk}").status_code == 403
    assert (
        client.post(
            f"/api/v1/payouts/{draft.pk}/submit", {}, content_type="application/json"
        ).status_code
        == 403
    )
    assert (
        client.post(
            f"/api/v1/payouts/{draft.pk}/preview", {}, content_type="application/json"
        ).status_code
        == 403
    )
    draft.refresh_from_db()
    assert draft.memo == "" and draft.status == "draft"


@pytest.mark.parametrize("role", ["finance_approver", "compliance"])
def test_only_makers_open_the_draft_form_and_create_by_api(
    role: str, environment: Environment, draft: Payout
) -> None:
    client = _client(make_staff(role), environment)
    assert client.get("/payouts/new/").status_code == 403
    assert client.get("/quotes/new/").status_code == 403
    response = client.post(
        "/api/v1/payouts",
        {
            "virtual_account_id": str(draft.virtual_account_id),
            "recipient_id": str(draft.recipient_id),
            "amount": "5.00",
        },
        content_type="application/json",
    )
    assert response.status_code == 403
    assert (
        client.post(
            "/api/v1/quotes",
            {"quote_currency": "MXN", "amount": "5"},
            content_type="application/json",
        ).status_code
        == 403
    )


def test_the_maker_edits_and_deletes_their_draft_on_the_pages(
    environment: Environment, draft: Payout
) -> None:
    client = _client(draft.maker, environment)
    assert b"Edit draft" in client.get(f"/payouts/{draft.pk}/").content
    form = client.get(f"/payouts/{draft.pk}/edit/")
    assert form.status_code == 200
    response = client.post(
        f"/payouts/{draft.pk}/edit/",
        {
            "virtual_account": draft.virtual_account_id,
            "recipient": draft.recipient_id,
            "amount": "42.00",
            "memo": "m" * 256,
        },
    )
    assert response.status_code == 200 and b"255 characters" in response.content
    response = client.post(
        f"/payouts/{draft.pk}/edit/",
        {
            "virtual_account": draft.virtual_account_id,
            "recipient": draft.recipient_id,
            "amount": "42.00",
            "memo": "rent",
        },
    )
    assert response.status_code == 302
    draft.refresh_from_db()
    assert (draft.amount, draft.memo) == (D("42.00"), "rent")
    assert client.post(f"/payouts/{draft.pk}/delete/").status_code == 302
    assert not Payout.objects.filter(pk=draft.pk).exists()


def test_the_maker_creates_a_draft_on_the_page(environment: Environment, draft: Payout) -> None:
    client = _client(draft.maker, environment)
    response = client.post(
        "/payouts/new/",
        {
            "virtual_account": draft.virtual_account_id,
            "recipient": draft.recipient_id,
            "amount": "12.34",
            "reference": "INV-1",
        },
    )
    assert response.status_code == 302
    created = Payout.objects.exclude(pk=draft.pk).get()
    assert created.amount == D("12.34") and created.maker == draft.maker


def test_a_payout_of_another_environment_is_not_found(draft: Payout) -> None:
    client = _client(draft.maker, make_environment("Other sandbox"))
    assert client.get(f"/payouts/{draft.pk}/").status_code == 404
    assert client.get(f"/api/v1/payouts/{draft.pk}").status_code == 404


def _list_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_the_list_costs_the_same_queries_for_one_or_many_rows(environment: Environment) -> None:
    maker = make_staff("finance_maker")
    first = make_draft(maker=maker, environment=environment)
    client = _client(maker, environment)
    one = _list_queries(client, "/payouts/?status=draft")
    for _ in range(12):
        make_draft(
            maker=make_staff("finance_maker"),
            environment=environment,
            virtual_account=first.virtual_account,
        )
    assert _list_queries(client, "/payouts/?status=draft") == one
    one_api = _list_queries(client, "/api/v1/payouts?limit=1")
    assert _list_queries(client, "/api/v1/payouts?limit=13") == one_api


def test_filters_and_the_streamed_csv_export(environment: Environment) -> None:
    maker = make_staff("finance_maker")
    small = make_draft(maker=maker, environment=environment, amount="10.00")
    make_draft(maker=maker, environment=environment, amount="900.00")
    client = _client(maker, environment)
    page = client.get("/payouts/?amount_max=100")
    assert list(page.context["page"].object_list) == [small]
    export = client.get("/payouts/export.csv?amount_max=100")
    assert export.streaming and export["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(b"".join(export.streaming_content).decode())))
    assert [(row["id"], row["amount"], row["maker"]) for row in rows] == [
        (str(small.pk), "10.00", maker.email)
    ]
    assert (
        client.get(f"/payouts/?maker={maker.pk}&corridor=USD-WIRE&status=draft").status_code == 200
    )


def test_bearer_tokens_act_as_their_owner_with_the_same_rules(
    environment: Environment, draft: Payout
) -> None:
    from staff.api_tokens import api_token_create

    approver = make_staff("finance_approver")
    environment_switch(user=approver, environment=environment)
    environment_switch(user=draft.maker, environment=environment)
    approver_token = api_token_create(user=approver, name="ci").plaintext
    maker_token = api_token_create(user=draft.maker, name="ci").plaintext
    client = Client()
    as_approver = {"HTTP_AUTHORIZATION": f"Bearer {approver_token}"}
    as_maker = {"HTTP_AUTHORIZATION": f"Bearer {maker_token}"}
    listed = client.get(f"/api/v1/payouts?environment={environment.name}", **as_approver)
    assert listed.status_code == 200 and [p["id"] for p in listed.json()] == [draft.pk]
    refused = client.patch(
        f"/api/v1/payouts/{draft.pk}", {"memo": "x"}, content_type="application/json", **as_approver
    )
    assert refused.status_code == 403
    changed = client.patch(
        f"/api/v1/payouts/{draft.pk}",
        {"memo": "by token"},
        content_type="application/json",
        **as_maker,
    )
    assert changed.status_code == 200 and changed.json()["memo"] == "by token"
    assert client.get("/api/v1/payouts").status_code == 401
