"""Searching payouts by reference, recipient, upstream id and exact amount: one selector for the
Payouts page, its CSV export and GET /api/v1/payouts, with bad input refused on its field."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from console.lists import SearchedAmount, amount_searched
from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts import selectors
from payouts.models import Payout
from staff.models import StaffUser
from tests.finance import (
    make_draft,
    make_end_user,
    make_environment,
    make_recipient,
    make_staff,
    make_virtual_account,
)
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def environment() -> Environment:
    return make_environment()


@pytest.fixture
def maker() -> StaffUser:
    return make_staff("finance_maker")


@pytest.fixture
def payouts(environment: Environment, maker: StaffUser) -> dict[str, Payout]:
    """Four payouts that differ in exactly what a search looks at."""
    owner = make_end_user(environment, first_name="Olga", last_name="Owner")
    account = make_virtual_account(environment, owner)
    person = make_recipient(
        environment, owner, created_by=maker, first_name="Ana", last_name="Silva"
    )
    company = make_recipient(
        environment,
        owner,
        created_by=maker,
        first_name="",
        last_name="",
        company_name="Acme Exports Ltd",
    )
    common = {"maker": maker, "environment": environment, "virtual_account": account}
    return {
        "539": make_draft(**common, recipient=person, amount="539.00", reference="INV-2026-001"),
        "539.01": make_draft(**common, recipient=person, amount="539.01", reference="INV-2026-002"),
        "5390": make_draft(
            **common,
            recipient=company,
            amount="5390.00",
            reference="PO-77",
            upstream_id="8d0c3f2e-1b7a-4c55-9e3f-aa0123456789",
        ),
        "1234.56": make_draft(**common, recipient=company, amount="1234.56", reference="PO-78"),
    }


def found(environment: Environment, text: str) -> set[Decimal]:
    return {p.amount for p in selectors.payout_list(environment=environment, q=text)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("539", SearchedAmount(Decimal("539"), "")),
        ("539.00", SearchedAmount(Decimal("539.00"), "")),
        ("539.5", SearchedAmount(Decimal("539.5"), "")),
        (" 1,234.56 ", SearchedAmount(Decimal("1234.56"), "")),
        ("539.00 usd", SearchedAmount(Decimal("539.00"), "USD")),
        ("539.001", None),  # more decimals than any amount has
        ("1,23", None),  # not a thousands separator
        ("-539", None),
        ("INV-539", None),
        ("", None),
    ],
)
def test_a_search_term_names_an_amount_exactly_or_none(
    text: str, expected: SearchedAmount | None
) -> None:
    assert amount_searched(text) == expected


@pytest.mark.parametrize("text", ["539", "539.00", "539.0", "539.00 USD", "539 usd"])
def test_an_amount_matches_exactly_however_it_is_written(
    environment: Environment, payouts: dict[str, Payout], text: str
) -> None:
    assert found(environment, text) == {Decimal("539.00")}


def test_an_amount_in_another_currency_finds_nothing(
    environment: Environment, payouts: dict[str, Payout]
) -> None:
    assert found(environment, "539 EUR") == set()


@pytest.mark.parametrize(
    ("text", "amounts"),
    [
        ("1,234.56", {"1234.56"}),
        ("inv-2026", {"539.00", "539.01"}),  # a reference, in part, any case
        ("INV-2026-002", {"539.01"}),
        ("Silva", {"539.00", "539.01"}),  # a recipient's last name
        ("ana silva", {"539.00", "539.01"}),  # first and last name, each word somewhere
        ("Acme exports", {"5390.00", "1234.56"}),  # a company recipient
        ("ana acme", set()),  # every word must match
        ("1b7a-4c55", {"5390.00"}),  # a piece of the upstream id
        ("Olga", set()),  # the paying account's owner is not the recipient
    ],
)
def test_reference_recipient_and_upstream_id_match_word_by_word(
    environment: Environment, payouts: dict[str, Payout], text: str, amounts: set[str]
) -> None:
    assert found(environment, text) == {Decimal(a) for a in amounts}


def test_search_stays_in_the_environment(
    environment: Environment, payouts: dict[str, Payout], maker: StaffUser
) -> None:
    elsewhere = make_environment("Elsewhere")
    make_draft(maker=maker, environment=elsewhere, amount="539.00")
    assert found(environment, "539") == {Decimal("539.00")}
    assert len(selectors.payout_list(environment=elsewhere, q="539")) == 1


def _client(user: StaffUser, environment: Environment) -> Client:
    environment_switch(user=user, environment=environment)
    return client_signed_in(user)


def test_the_page_and_its_export_search_and_show_names_not_upstream_ids(
    environment: Environment, payouts: dict[str, Payout], maker: StaffUser
) -> None:
    account = payouts["539"].virtual_account
    account.upstream_id = str(uuid.uuid4())
    account.save(update_fields=["upstream_id"])
    client = _client(maker, environment)
    page = client.get("/payouts/", {"q": "539.00"})
    assert list(page.context["page"].object_list) == [payouts["539"]]
    html = page.content.decode()
    assert "Olga Owner" in html and "Ana Silva" in html
    assert account.upstream_id not in html
    export = client.get("/payouts/export.csv", {"q": "Acme"})
    lines = b"".join(export.streaming_content).decode().strip().splitlines()
    assert len(lines) == 3  # the header and the two payouts to Acme


def test_the_page_shows_a_too_long_search_on_its_field(
    environment: Environment, payouts: dict[str, Payout], maker: StaffUser
) -> None:
    page = _client(maker, environment).get("/payouts/", {"q": "x" * 101})
    assert page.status_code == 200
    assert page.context["form"].errors["q"]


def test_the_api_searches_with_the_same_selector(
    environment: Environment, payouts: dict[str, Payout], maker: StaffUser
) -> None:
    client = _client(maker, environment)

    def ids(**params: str) -> set[int]:
        response = client.get("/api/v1/payouts", params)
        assert response.status_code == 200, response.json()
        return {row["id"] for row in response.json()}

    assert ids(q="539") == ids(q="539.00") == {payouts["539"].pk}
    assert ids(amount="539") == ids(amount="539.00") == {payouts["539"].pk}
    assert ids(q="Silva", amount="539.01") == {payouts["539.01"].pk}
    assert ids(q="1b7a-4c55") == {payouts["5390"].pk}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"amount": "five hundred"}, "amount"),
        ({"amount": "539.001"}, "amount"),
        ({"amount": "-1"}, "amount"),
        ({"q": "x" * 101}, "q"),
    ],
)
def test_the_api_refuses_bad_search_input_on_its_field(
    environment: Environment, maker: StaffUser, params: dict[str, str], field: str
) -> None:
    response = _client(maker, environment).get("/api/v1/payouts", params)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error"
    assert [error["field"] for error in body["errors"]] == [field]


def test_the_openapi_schema_documents_the_search(maker: StaffUser) -> None:
    client = Client()
    client.force_login(maker)
    schema = client.get("/api/v1/openapi.json").json()
    parameters = {p["name"]: p for p in schema["paths"]["/api/v1/payouts"]["get"]["parameters"]}
    assert "539.00" in parameters["q"]["description"]
    assert "amount" in parameters


def test_a_searched_list_costs_the_same_queries_for_one_or_many_rows(
    environment: Environment, payouts: dict[str, Payout], maker: StaffUser
) -> None:
    client = _client(maker, environment)

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/payouts/", {"q": "Silva"}).status_code == 200
        return len(queries)

    count()  # warm the session and permission caches
    one_account = count()
    for index in range(6):  # each from another account of another owner, to another recipient
        owner = make_end_user(environment, last_name=f"Owner {index}")
        recipient = make_recipient(environment, owner, created_by=maker, last_name="Silva")
        make_draft(
            maker=make_staff("finance_maker"),
            environment=environment,
            virtual_account=make_virtual_account(environment, owner),
            recipient=recipient,
        )
    assert count() == one_account
