"""Every statements page and endpoint per role: finance makers, approvers and the auditor read
(books.view_books), and the admin as a superuser; compliance and staff without a role get 403;
visitors sign in."""

from __future__ import annotations

import pytest
from django.test import Client

from staff.models import StaffUser
from tests.books.statement_fixtures import October, build_october
from tests.finance import make_environment
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db

READS = {
    "finance_maker": True,
    "finance_approver": True,
    "auditor": True,
    "admin": True,  # a superuser (staff.bootstrap)
    "compliance": False,
}
PERIOD = "start=2026-10-01&end=2026-10-31"


@pytest.fixture
def october() -> October:
    return build_october(make_environment())


def _urls(october: October) -> tuple[list[str], list[str]]:
    va, paid = october.account.pk, october.completed.pk
    pages = [
        "/books/statements/",
        f"/books/statements/?account={va}&{PERIOD}",
        f"/books/statements/?account={va}&{PERIOD}&format=csv",
        f"/books/statements/?account={va}&{PERIOD}&format=pdf",
        f"/books/fees/?{PERIOD}",
        f"/books/receipts/{paid}/",
    ]
    api = [
        f"/api/v1/books/accounts/{va}/statement?{PERIOD}",
        f"/api/v1/books/accounts/{va}/statement?{PERIOD}&format=csv",
        f"/api/v1/books/accounts/{va}/statement?{PERIOD}&format=pdf",
        f"/api/v1/books/accounts/{va}/balance?on=2026-10-03",
        f"/api/v1/books/accounts/{va}/balance-history?{PERIOD}",
        f"/api/v1/books/payouts/{paid}/receipt",
        f"/api/v1/books/fees?{PERIOD}",
    ]
    return pages, api


@pytest.mark.parametrize("role", sorted(READS))
def test_every_page_and_endpoint_per_role(role: str, october: October, client_for) -> None:  # type: ignore[no-untyped-def]
    client = client_for(role)
    pages, api = _urls(october)
    for url in pages + api:
        status = client.get(url).status_code
        assert status == (200 if READS[role] else 403), (url, status)


def test_signed_out_and_roleless(october: October) -> None:
    pages, api = _urls(october)
    nobody = StaffUser.objects.create_user("norole@payops.test", "pw-not-secret-123")
    client = client_signed_in(nobody)
    for url in pages + api:
        assert client.get(url).status_code == 403, url
    for url in pages:
        assert Client().get(url).status_code == 302, url
    for url in api:
        assert Client().get(url).status_code == 401, url


def test_the_statement_page_and_api_agree(october: October, client_for) -> None:  # type: ignore[no-untyped-def]
    client = client_for("auditor")
    va = october.account.pk
    page = client.get(f"/books/statements/?account={va}&{PERIOD}&on=2026-10-03")
    assert page.status_code == 200
    assert b"1,115.25 USD" in page.content and b'data-testid="statement-lines"' in page.content
    assert b"1,192.46 USD" in page.content  # the balance as of the 3rd
    body = client.get(f"/api/v1/books/accounts/{va}/statement?{PERIOD}").json()
    assert (body["opening"], body["closing"], len(body["lines"])) == ("500.00", "1115.25", 9)
    assert body["upstream_check"]["agrees"] is False
    balance = client.get(f"/api/v1/books/accounts/{va}/balance?on=2026-10-03").json()
    assert balance["balance"] == "1192.46"
    history = client.get(f"/api/v1/books/accounts/{va}/balance-history?{PERIOD}").json()
    assert len(history["days"]) == 31 and history["days"][-1]["balance"] == "1115.25"
    bad = client.get(f"/api/v1/books/accounts/{va}/statement?start=2026-10-31&end=2026-10-01")
    assert bad.status_code == 400
