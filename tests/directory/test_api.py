"""The directory's JSON API end to end through personal tokens, against the emulator: one error
shape, 4xx for bad input, each role's token doing exactly what that role may do."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from gateway.models import Environment, EnvironmentKind
from staff.models import StaffUser
from tests.directory.conftest import ApiClient, user_values
from tests.identity import client_signed_in
from users.models import EndUser

API_WIRE = {
    "first_name": "Luis",
    "last_name": "Pérez",
    "email": "luis@example.com",
    "address": {"street_name": "1 Main St", "city": "Austin", "state": "TX", "country": "US"},
    "account": {
        "account_type": "WIRE",
        "account_number": "123456789",
        "routing_number": "021000022",
        "bank_name": "Chase",
    },
}


def assert_error_shape(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"code", "message", "errors"}
    assert all(set(item) == {"field", "message"} for item in body["errors"])
    if code:
        assert body["code"] == code
    return body


def new_user(api: dict[str, ApiClient], email: str = "ana@example.com") -> dict[str, Any]:
    response = api["compliance"].post("end-users", user_values(email))
    assert response.status_code == 201, response.content
    return response.json()


def test_compliance_creates_an_end_user_once_per_idempotency_key(
    sandbox: Environment, api: dict[str, ApiClient], live_emulator: Any
) -> None:
    key = str(uuid.uuid4())
    client = api["compliance"]
    first = client.client.post(
        "/api/v1/end-users",
        user_values(),
        content_type="application/json",
        headers={**client._headers(), "Idempotency-Key": key},
    )
    again = client.client.post(
        "/api/v1/end-users",
        user_values(),
        content_type="application/json",
        headers={**client._headers(), "Idempotency-Key": key},
    )
    assert first.status_code == again.status_code == 201
    body = first.json()
    assert again.json()["id"] == body["id"]
    assert body["upstream_id"] and body["verification_status"] == "verified"
    assert body["phone_number"] == "+525512345678"
    assert live_emulator.witness.count("/v1/users", "POST") == 1
    read = client.get(f"end-users/{body['id']}").json()
    assert read["upstream_id"] == body["upstream_id"]


def test_bad_input_is_a_400_naming_each_field(
    sandbox: Environment, api: dict[str, ApiClient], live_emulator: Any
) -> None:
    missing = api["compliance"].post("end-users", {"type": "individual", "first_name": "A"})
    fields = {e["field"] for e in assert_error_shape(missing, 400, "validation_error")["errors"]}
    assert {"email", "phone_number", "last_name", "country"} <= fields
    wrong = api["compliance"].post("end-users", user_values(phone_number="123", country="ZZ"))
    fields = {e["field"] for e in assert_error_shape(wrong, 400, "validation_error")["errors"]}
    assert fields == {"phone_number", "country"}
    assert EndUser.objects.count() == 0
    assert live_emulator.witness.count("/v1/users", "POST") == 0


def test_a_rejected_user_shows_its_state_and_cannot_get_an_account(
    sandbox: Environment, api: dict[str, ApiClient]
) -> None:
    rejected = new_user(api, "bo+reject@example.com")
    assert rejected["verification_status"] == "rejected"
    refused = api["finance_maker"].post(
        "virtual-accounts", {"end_user_id": rejected["id"], "mode": "fiat"}
    )
    body = assert_error_shape(refused, 400, "end_user_not_verified")
    assert [e["field"] for e in body["errors"]] == ["end_user_id"]


def test_a_makers_token_cannot_do_what_a_maker_cannot(
    sandbox: Environment, api: dict[str, ApiClient], live_emulator: Any
) -> None:
    user = new_user(api)
    maker = api["finance_maker"]
    assert_error_shape(
        maker.post("end-users", user_values("x@example.com")), 403, "permission_denied"
    )
    assert_error_shape(maker.patch(f"end-users/{user['id']}", {"email": "y@example.com"}), 403)
    assert_error_shape(maker.post(f"end-users/{user['id']}/kyc-review", {"reason": "ok"}), 403)
    assert live_emulator.witness.count("/v1/users", "POST") == 1
    # ...and can do what a maker can: read users, open an account, register a recipient.
    assert maker.get("end-users").status_code == 200
    account = maker.post("virtual-accounts", {"end_user_id": user["id"], "mode": "fiat"})
    assert account.status_code == 201, account.content
    assert account.json()["status"] == "activating" and account.json()["upstream_id"]


def test_an_approvers_token_only_reads(sandbox: Environment, api: dict[str, ApiClient]) -> None:
    user = new_user(api)
    approver = api["finance_approver"]
    assert approver.get(f"end-users/{user['id']}").status_code == 200
    assert approver.get("virtual-accounts").status_code == 200
    assert approver.get("recipients").status_code == 200
    assert_error_shape(
        approver.post("virtual-accounts", {"end_user_id": user["id"], "mode": "fiat"}), 403
    )
    assert_error_shape(approver.post("recipients", {**API_WIRE, "end_user_id": user["id"]}), 403)


def test_a_recipient_with_a_bad_routing_number_is_refused_on_that_field_then_accepted(
    sandbox: Environment, api: dict[str, ApiClient], staff: dict[str, StaffUser]
) -> None:
    user = new_user(api)
    maker = api["finance_maker"]
    bad = maker.post("recipients", {**API_WIRE, "end_user_id": user["id"]})
    body = assert_error_shape(bad, 400, "validation_error")
    assert [e["field"] for e in body["errors"]] == ["account.routing_number"]
    fixed = {**API_WIRE, "account": {**API_WIRE["account"], "routing_number": "021000021"}}
    created = maker.post("recipients", {**fixed, "end_user_id": user["id"]})
    assert created.status_code == 201, created.content
    out = created.json()
    assert out["upstream_id"] and out["account"]["account_number"] == "…6789"
    assert out["created_by"] == staff["finance_maker"].email
    assert maker.get(f"recipients/{out['id']}").json()["name"] == "Luis Pérez"


def test_schema_errors_in_nested_bodies_name_the_nested_field(
    sandbox: Environment, api: dict[str, ApiClient]
) -> None:
    user = new_user(api)
    body = {**API_WIRE, "end_user_id": user["id"], "address": {"city": "Austin"}}
    fields = {
        e["field"]
        for e in assert_error_shape(api["finance_maker"].post("recipients", body), 400)["errors"]
    }
    assert fields == {"address.street_name", "address.country"}


def test_identity_changes_need_confirmation(
    sandbox: Environment, api: dict[str, ApiClient]
) -> None:
    user = new_user(api)
    path = f"end-users/{user['id']}"
    warned = api["compliance"].patch(path, {"first_name": "Anita"})
    assert [
        e["field"] for e in assert_error_shape(warned, 409, "reverification_required")["errors"]
    ] == ["first_name"]
    done = api["compliance"].patch(path, {"first_name": "Anita", "confirm_reverification": True})
    assert done.status_code == 200 and done.json()["first_name"] == "Anita"


def test_environment_parameter_selects_another_environment(
    sandbox: Environment, api: dict[str, ApiClient]
) -> None:
    user = new_user(api)
    Environment.objects.create(
        name="Other", kind=EnvironmentKind.SANDBOX, base_url=sandbox.base_url
    )
    assert api["compliance"].get("end-users", environment="Other").json()["count"] == 0
    assert api["compliance"].get("end-users").json()["count"] == 1
    assert_error_shape(
        api["compliance"].get(f"end-users/{user['id']}", environment="Other"), 404, "not_found"
    )
    unknown = api["compliance"].get("end-users", environment="Nope")
    assert [e["field"] for e in assert_error_shape(unknown, 400)["errors"]] == ["environment"]


def test_no_token_is_a_401_in_the_one_shape(db: None) -> None:
    assert_error_shape(Client().get("/api/v1/end-users"), 401, "unauthorized")


def test_list_endpoints_cost_the_same_queries_for_one_row_or_many(
    sandbox: Environment, api: dict[str, ApiClient], staff: dict[str, StaffUser]
) -> None:
    from accounts.models import Recipient, VirtualAccount

    def seed(n: int, offset: int) -> None:
        for i in range(offset, offset + n):
            user = EndUser.objects.create(
                environment=sandbox,
                upstream_id=f"u-{i}",
                email=f"u{i}@example.com",
                first_name="U",
                last_name=str(i),
                country="MX",
                created_by=staff["compliance"],
                reviewed_by=staff["compliance"],
                verification_status="verified",
            )
            VirtualAccount.objects.create(
                environment=sandbox, upstream_id=f"va-{i}", end_user=user, created_by=staff["admin"]
            )
            Recipient.objects.create(
                environment=sandbox,
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

    def count(path: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert api["admin"].get(path).status_code == 200
        return len(queries)

    api["admin"].get("me")  # the token's first use records last_used_at: not a list cost
    seed(1, 0)
    one = {path: count(path) for path in ("end-users", "virtual-accounts", "recipients")}
    seed(40, 1)
    many = {path: count(path) for path in ("end-users", "virtual-accounts", "recipients")}
    assert one == many
    assert api["admin"].get("recipients").json()["count"] == 41


def test_the_openapi_page_documents_the_directory(db: None, staff: dict[str, StaffUser]) -> None:
    # Compliance signs in with a second factor (a role that may step up must have one).
    schema = client_signed_in(staff["compliance"]).get("/api/v1/openapi.json").json()
    paths = schema["paths"]
    for path in (
        "/api/v1/end-users",
        "/api/v1/end-users/{id}",
        "/api/v1/end-users/{id}/refresh",
        "/api/v1/virtual-accounts",
        "/api/v1/virtual-accounts/{id}",
        "/api/v1/virtual-accounts/{id}/refresh",
        "/api/v1/recipients",
        "/api/v1/recipients/{id}",
    ):
        assert path in paths, path
    components = schema["components"]["schemas"]
    assert components["EndUserOut"]["properties"]["upstream_id"]["description"]
    assert "400" in paths["/api/v1/recipients"]["post"]["responses"]
    assert set(components["ErrorOut"]["properties"]) == {"code", "message", "errors"}
