"""The probe's bad inputs on the payout and quote doors: refused on the field, nothing stored."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from console.inputs import AMOUNT_MESSAGE
from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.models import Payout
from quotes.forms import QuoteAmountForm
from staff.models import StaffUser
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db

ARABIC_TEN = "\u0661\u0660"


@pytest.fixture
def draft() -> Payout:
    return make_draft(maker=make_staff("finance_maker"), environment=make_environment())


def _client(user: StaffUser, environment: Environment) -> Client:
    environment_switch(user=user, environment=environment)
    return client_signed_in(user)


def _post(client: Client, path: str, body: dict[str, object]) -> object:
    return client.post(path, json.dumps(body), content_type="application/json")


def _errors(response: object) -> dict[str, str]:
    assert response.status_code == 400, response.content  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert set(body) == {"code", "message", "errors"}
    return {item["field"]: item["message"] for item in body["errors"]}


def test_a_nul_memo_is_refused_on_the_api_and_nothing_is_stored(draft: Payout) -> None:
    client = _client(draft.maker, draft.environment)
    body = {
        "virtual_account_id": str(draft.virtual_account_id),
        "recipient_id": str(draft.recipient_id),
        "amount": "10.00",
        "memo": "rent\x00march",
    }
    assert list(_errors(_post(client, "/api/v1/payouts", body))) == ["memo"]
    patched = client.patch(
        f"/api/v1/payouts/{draft.pk}", {"memo": "a\x00b"}, content_type="application/json"
    )
    assert list(_errors(patched)) == ["memo"]
    assert Payout.objects.count() == 1
    draft.refresh_from_db()
    assert draft.memo == ""


@pytest.mark.parametrize("char", ["\x00", "\x1b"])
def test_a_nul_memo_is_refused_on_the_page_and_nothing_is_stored(draft: Payout, char: str) -> None:
    """Django's CharField already refused NUL on pages; the escape character (and the rest of
    C0) is what console.inputs.TextField adds: the page and the API now refuse the same set."""
    client = _client(draft.maker, draft.environment)
    response = client.post(
        "/payouts/new/",
        {
            "virtual_account": draft.virtual_account_id,
            "recipient": draft.recipient_id,
            "amount": "12.34",
            "memo": f"rent{char}march",
        },
    )
    assert response.status_code == 200
    assert "memo" in response.context["form"].errors
    assert Payout.objects.count() == 1


@pytest.mark.parametrize("typed", [ARABIC_TEN, " 10 ", "\uff11\uff10"])
def test_an_amount_in_other_digits_or_padded_is_refused_on_the_api(
    draft: Payout, typed: str
) -> None:
    client = _client(draft.maker, draft.environment)
    body = {
        "virtual_account_id": str(draft.virtual_account_id),
        "recipient_id": str(draft.recipient_id),
        "amount": typed,
    }
    assert _errors(_post(client, "/api/v1/payouts", body)) == {"amount": AMOUNT_MESSAGE}
    quote = _post(client, "/api/v1/quotes", {"quote_currency": "MXN", "amount": typed})
    assert _errors(quote) == {"amount": AMOUNT_MESSAGE}
    assert Payout.objects.count() == 1


@pytest.mark.parametrize("typed", [ARABIC_TEN, " 10 "])
def test_an_amount_in_other_digits_or_padded_is_refused_on_the_pages(
    draft: Payout, typed: str
) -> None:
    client = _client(draft.maker, draft.environment)
    response = client.post(
        "/payouts/new/",
        {
            "virtual_account": draft.virtual_account_id,
            "recipient": draft.recipient_id,
            "amount": typed,
        },
    )
    assert response.status_code == 200
    assert response.context["form"].errors["amount"] == [AMOUNT_MESSAGE]
    assert Payout.objects.count() == 1
    assert QuoteAmountForm({"amount": typed}).errors["amount"] == [AMOUNT_MESSAGE]


def test_a_payout_id_in_other_digits_is_not_a_payops_id(draft: Payout) -> None:
    client = _client(draft.maker, draft.environment)
    arabic_id = "".join(chr(0x0660 + int(d)) for d in str(draft.virtual_account_id))
    body = {
        "virtual_account_id": arabic_id,
        "recipient_id": str(draft.recipient_id),
        "amount": "10.00",
    }
    assert "virtual_account_id" in _errors(_post(client, "/api/v1/payouts", body))
    assert Payout.objects.count() == 1


@pytest.mark.parametrize(
    ("role", "path", "field"),
    [
        ("compliance", "/api/v1/end-users?search=a%00b", "search"),
        ("compliance", "/api/v1/recipients?search=a%00b", "search"),
        ("finance_approver", "/api/v1/payouts?q=a%00b", "q"),
        ("finance_approver", "/api/v1/payouts?corridor=USD%00", "corridor"),
        ("finance_approver", "/api/v1/quotes?corridor=USD%00", "corridor"),
        ("admin", "/api/v1/webhooks/events?q=evt%00", "q"),
    ],
)
def test_a_nul_in_a_search_is_a_400_on_its_field_not_a_500(
    role: str, path: str, field: str
) -> None:
    """PostgreSQL refuses NUL in a query's text: it was a 500 there (SQLite let it through)."""
    environment = make_environment()
    client = _client(make_staff(role), environment)
    assert list(_errors(client.get(path))) == [field]
