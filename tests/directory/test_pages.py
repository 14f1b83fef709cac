"""Directory pages: each role sees and does exactly what it may, forms show errors on their
fields, lists cost the same number of queries for one row or many."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.models import Recipient, VirtualAccount
from gateway.models import Environment, EnvironmentKind
from staff.models import StaffUser
from tests.directory.conftest import WIRE_RECIPIENT, user_values
from tests.identity import client_signed_in
from users.models import EndUser, KycReview


@pytest.fixture
def environment(db: None) -> Environment:
    return Environment.objects.create(
        name="Pages", kind=EnvironmentKind.SANDBOX, base_url="http://127.0.0.1:9"
    )


def browser_for(user: StaffUser) -> Client:
    return client_signed_in(user)


def seed(environment: Environment, staff: dict[str, StaffUser], n: int, offset: int = 0) -> None:
    for i in range(offset, offset + n):
        user = EndUser.objects.create(
            environment=environment,
            upstream_id=f"u-{i}",
            email=f"u{i}@example.com",
            first_name="U",
            last_name=str(i),
            country="MX",
            created_by=staff["compliance"],
            reviewed_by=staff["compliance"],
            verification_status="rejected" if i % 2 else "verified",
        )
        VirtualAccount.objects.create(
            environment=environment, upstream_id=f"va-{i}", end_user=user, created_by=staff["admin"]
        )
        Recipient.objects.create(
            environment=environment,
            upstream_id=f"r-{i}",
            end_user=user,
            kind="individual",
            first_name="R",
            last_name=str(i),
            street_name="s",
            city="c",
            country="US",
            account_type="WIRE",
            account_number="123456789",
            routing_number="021000021",
            created_by=staff["finance_maker"],
        )


# (url name, role -> expected status) for GET pages; 403 is a refusal, not a hidden button.
PAGES = {
    "/end-users/": {"finance_maker": 200, "finance_approver": 200, "compliance": 200, "admin": 200},
    "/end-users/new/": {
        "finance_maker": 403,
        "finance_approver": 403,
        "compliance": 200,
        "admin": 200,
    },
    "/end-users/kyc/": {
        "finance_maker": 403,
        "finance_approver": 403,
        "compliance": 200,
        "admin": 200,
    },
    "/accounts/": {"finance_maker": 200, "finance_approver": 200, "compliance": 200, "admin": 200},
    "/accounts/virtual-accounts/new/": {
        "finance_maker": 200,
        "finance_approver": 403,
        "compliance": 200,
        "admin": 200,
    },
    "/accounts/recipients/": {
        "finance_maker": 200,
        "finance_approver": 200,
        "compliance": 200,
        "admin": 200,
    },
    "/accounts/recipients/new/": {
        "finance_maker": 200,
        "finance_approver": 403,
        "compliance": 200,
        "admin": 200,
    },
}


@pytest.mark.parametrize("path", list(PAGES))
def test_each_role_gets_exactly_its_pages(
    environment: Environment, staff: dict[str, StaffUser], path: str
) -> None:
    for role, expected in PAGES[path].items():
        assert browser_for(staff[role]).get(path).status_code == expected, (role, path)


def test_details_are_readable_by_every_role_and_actions_refused_where_not_allowed(
    environment: Environment, staff: dict[str, StaffUser]
) -> None:
    seed(environment, staff, 1)
    user = EndUser.objects.get()
    va = VirtualAccount.objects.get()
    recipient = Recipient.objects.get()
    for role in staff:
        client = browser_for(staff[role])
        assert client.get(f"/end-users/{user.pk}/").status_code == 200
        assert client.get(f"/accounts/virtual-accounts/{va.pk}/").status_code == 200
        assert client.get(f"/accounts/recipients/{recipient.pk}/").status_code == 200
    for role in ("finance_maker", "finance_approver"):
        client = browser_for(staff[role])
        assert client.get(f"/end-users/{user.pk}/edit/").status_code == 403
        assert client.post(f"/end-users/{user.pk}/reviewed/", {"reason": "x"}).status_code == 403
        assert client.post(f"/end-users/{user.pk}/notes/", {"text": "x"}).status_code == 403
    assert KycReview.objects.count() == 0


def test_anonymous_visitors_are_sent_to_sign_in(environment: Environment) -> None:
    response = Client().get("/end-users/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_compliance_marks_a_user_reviewed_with_who_and_when(
    environment: Environment, staff: dict[str, StaffUser]
) -> None:
    seed(environment, staff, 2)
    rejected = EndUser.objects.get(verification_status="rejected")
    client = browser_for(staff["compliance"])
    queue = client.get("/end-users/kyc/").content.decode()
    assert rejected.email in queue
    assert client.post(f"/end-users/{rejected.pk}/reviewed/", {"reason": ""}).status_code == 400
    client.post(f"/end-users/{rejected.pk}/reviewed/", {"reason": "asked for a new document"})
    rejected.refresh_from_db()
    assert rejected.reviewed_by == staff["compliance"] and rejected.reviewed_at
    assert rejected.email not in client.get("/end-users/kyc/").content.decode()
    assert rejected.email in client.get("/end-users/kyc/?reviewed=yes").content.decode()
    detail = client.get(f"/end-users/{rejected.pk}/").content.decode()
    assert "asked for a new document" in detail


@pytest.mark.parametrize(
    "path", ["/end-users/", "/end-users/kyc/?reviewed=all", "/accounts/", "/accounts/recipients/"]
)
def test_list_pages_cost_the_same_queries_for_one_row_or_many(
    environment: Environment, staff: dict[str, StaffUser], path: str
) -> None:
    client = browser_for(staff["admin"])

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code == 200
        return len(queries)

    seed(environment, staff, 2)
    count()  # warm the session and permission caches
    few = count()
    seed(environment, staff, 30, offset=2)
    assert count() == few


def test_filters_run_on_the_server(environment: Environment, staff: dict[str, StaffUser]) -> None:
    seed(environment, staff, 4)
    client = browser_for(staff["compliance"])
    page = client.get("/end-users/", {"verification_status": "rejected"})
    assert [u.verification_status for u in page.context["page"]] == ["rejected", "rejected"]
    found = client.get("/end-users/", {"q": "u3@example.com"}).context["page"]
    assert [u.email for u in found] == ["u3@example.com"]
    htmx = client.get("/end-users/", {"q": "u3"}, headers={"HX-Request": "true"})
    assert b"<html" not in htmx.content and b"u3@example.com" in htmx.content


def test_the_create_form_shows_field_errors_on_their_fields(
    environment: Environment, staff: dict[str, StaffUser]
) -> None:
    client = browser_for(staff["compliance"])
    form = client.get("/end-users/new/").context["form"]
    response = client.post(
        "/end-users/new/",
        {**user_values(phone_number="12"), "request_key": form["request_key"].value()},
    )
    assert response.status_code == 200
    assert response.context["form"].errors["phone_number"]
    assert EndUser.objects.count() == 0


def test_recipient_form_puts_a_bad_routing_number_on_its_field(
    environment: Environment, staff: dict[str, StaffUser]
) -> None:
    seed(environment, staff, 1)
    user = EndUser.objects.get()
    client = browser_for(staff["finance_maker"])
    form = client.get("/accounts/recipients/new/").context["form"]
    response = client.post(
        "/accounts/recipients/new/",
        {
            **WIRE_RECIPIENT,
            "routing_number": "021000022",
            "end_user": user.pk,
            "request_key": form["request_key"].value(),
        },
    )
    errors: Any = response.context["form"].errors
    assert list(errors) == ["routing_number"]
    assert Recipient.objects.count() == 1  # only the seeded one
