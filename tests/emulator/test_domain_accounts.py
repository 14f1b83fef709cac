"""Virtual accounts (activation on the clock, balance, deposits) and recipients."""

import uuid

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def open_account(sandbox, user_id, **overrides):
    body = {"user_id": user_id, "type": "US_BANK", "bank": "slovak_savings_bank", "mode": "fiat"}
    return sandbox.post("/v1/virtual-accounts", {**body, **overrides})


def test_account_activates_after_the_configured_delay(sandbox):
    from emulator.models import WebhookEvent

    user = sandbox.create_user()
    created = open_account(sandbox, user["user_id"])
    assert created.status_code == 201, created.text
    data = created.json()["data"]
    assert data["status"] == "activating"
    assert data["account_number"] is None and data["routing_number"] is None
    assert data["currency"] == "USD"
    balance = sandbox.get(f"/v1/virtual-accounts/{data['id']}/balance")
    assert balance.status_code == 400
    assert balance.json()["code"] == "VIRTUAL_ACCOUNT_NOT_ACTIVE"
    sandbox.advance(4)
    assert sandbox.tick()["activated_accounts"] == 0
    sandbox.advance(1.5)
    assert sandbox.tick()["activated_accounts"] == 1
    active = sandbox.get(f"/v1/virtual-accounts/{data['id']}").json()["data"]
    assert active["status"] == "active"
    assert len(active["account_number"]) == 12 and len(active["routing_number"]) == 9
    names = [e.event for e in WebhookEvent.objects.order_by("id") if e.event.startswith("virtual")]
    assert names == ["virtual_account.created", "virtual_account.activated"]
    activated = WebhookEvent.objects.get(event="virtual_account.activated").data
    assert activated["account_number"] == active["account_number"]
    assert sandbox.balance(data["id"]) == "0.00"


def test_activation_delay_is_a_setting(sandbox, settings):
    settings.EMULATOR_VA_ACTIVATION_SECONDS = 60
    user = sandbox.create_user()
    account_id = open_account(sandbox, user["user_id"]).json()["data"]["id"]
    sandbox.advance(10)
    sandbox.tick()
    assert (
        sandbox.get(f"/v1/virtual-accounts/{account_id}").json()["data"]["status"] == "activating"
    )
    sandbox.advance(50)
    sandbox.tick()
    assert sandbox.get(f"/v1/virtual-accounts/{account_id}").json()["data"]["status"] == "active"


def test_sandbox_refuses_other_banks(sandbox):
    user = sandbox.create_user()
    response = open_account(sandbox, user["user_id"], bank="other_bank")
    assert response.status_code == 400
    assert response.json()["message"] == "Invalid bank"


def test_account_needs_a_verified_user(sandbox):
    user = sandbox.create_user("ana+reject@example.com")
    response = open_account(sandbox, user["user_id"])
    assert response.status_code == 400
    assert response.json()["code"] == "USER_NOT_VERIFIED"


def test_account_validation_errors(sandbox):
    user = sandbox.create_user()
    response = open_account(sandbox, user["user_id"], mode="barter", type="EU_BANK")
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {"mode", "type"}
    missing = open_account(sandbox, str(uuid.uuid4()))
    assert missing.status_code == 404 and missing.json()["code"] == "USER_NOT_FOUND"


def test_list_accounts_by_user(sandbox):
    first = sandbox.create_user()
    second = sandbox.create_user("bo@example.com")
    open_account(sandbox, first["user_id"])
    open_account(sandbox, first["user_id"], mode="crypto")
    open_account(sandbox, second["user_id"])
    listed = sandbox.get("/v1/virtual-accounts", user_id=first["user_id"]).json()["data"]
    assert len(listed) == 2
    assert {item["mode"] for item in listed} == {"fiat", "crypto"}


def test_deposit_raises_balance_and_emits_event(sandbox):
    from emulator.models import WebhookEvent

    user = sandbox.create_user()
    account = sandbox.active_account(user["user_id"])
    sandbox.deposit(account["id"], "250.50")
    sandbox.deposit(account["id"], "0.50")
    assert sandbox.balance(account["id"]) == "251.00"
    event = WebhookEvent.objects.filter(event="virtual_account.deposit_funds_received").first()
    assert event.data["amount"] == "0.50"
    assert event.data["source"]["payment_rail"] == "ACH"


def test_deposit_needs_an_active_account(sandbox, control):
    user = sandbox.create_user()
    account_id = open_account(sandbox, user["user_id"]).json()["data"]["id"]
    response = control.post(
        "/_control/deposits", json={"virtual_account_id": account_id, "amount": "10.00"}
    )
    assert response.status_code == 400
    assert response.json()["code"] == "VIRTUAL_ACCOUNT_NOT_ACTIVE"


def test_other_clients_account_is_not_found(sandbox, http, authed):
    from tests.emulator.conftest import make_credentials

    user = sandbox.create_user()
    account_id = open_account(sandbox, user["user_id"]).json()["data"]["id"]
    other = authed("sandbox", make_credentials("other", rate_per_second=1000, max_concurrent=50))
    response = http.get(f"/sandbox/v1/virtual-accounts/{account_id}", headers=other)
    assert response.status_code == 404


def test_recipients_create_get_and_list(sandbox):
    user = sandbox.create_user()
    wire = sandbox.recipient(user["user_id"], "WIRE")
    sandbox.recipient(user["user_id"], "SWIFT")
    assert wire["account"]["routing_number"] == "026009593"
    assert wire["created_ts"].endswith("Z")
    got = sandbox.get(f"/v1/recipients/{wire['recipient_id']}")
    assert got.json()["data"]["recipient_id"] == wire["recipient_id"]
    listed = sandbox.get("/v1/recipients", user_id=user["user_id"]).json()
    assert listed["total"] == 2 and len(listed["recipients"]) == 2
    assert sandbox.get(f"/v1/recipients/{uuid.uuid4()}").json()["code"] == "RECIPIENT_NOT_FOUND"


ADDRESS = {"street_name": "1 Main St", "city": "Austin", "country": "US"}
VALID_RECIPIENT = {
    "company_name": "Acme",
    "address": ADDRESS,
    "account": {"account_type": "WIRE", "account_number": "1", "routing_number": "026009593"},
}


@pytest.mark.parametrize(
    ("path", "field"),
    [
        (("user_id",), "user_id"),
        (("company_name",), "first_name"),
        (("address",), "address.street_name"),
        (("address", "street_name"), "address.street_name"),
        (("address", "city"), "address.city"),
        (("address", "country"), "address.country"),
        (("account",), "account"),
        (("account", "account_type"), "account.account_type"),
        (("account", "account_number"), "account.account_number"),
        (("account", "routing_number"), "account.routing_number"),
    ],
)
def test_each_missing_required_recipient_field_is_a_400_naming_it(sandbox, path, field):
    user = sandbox.create_user()
    body = {**VALID_RECIPIENT, "user_id": user["user_id"]}
    body = {k: (dict(v) if isinstance(v, dict) else v) for k, v in body.items()}
    if len(path) == 1:
        del body[path[0]]
    else:
        del body[path[0]][path[1]]
    response = sandbox.post("/v1/recipients", body)
    assert response.status_code == 400, response.text
    assert field in [error["field"] for error in response.json()["errors"]]
    complete = sandbox.post("/v1/recipients", {**VALID_RECIPIENT, "user_id": user["user_id"]})
    assert complete.status_code == 201, complete.text


@pytest.mark.parametrize("country", ["USA", "us", "XX", "1"])
def test_a_recipient_country_must_be_an_iso_3166_alpha_2_code(sandbox, country):
    user = sandbox.create_user()
    body = {
        **VALID_RECIPIENT,
        "user_id": user["user_id"],
        "address": {**ADDRESS, "country": country},
    }
    response = sandbox.post("/v1/recipients", body)
    assert response.status_code == 400, response.text
    assert response.json()["errors"][0]["field"] == "address.country"


def test_recipient_rail_needs_its_bank_code(sandbox):
    user = sandbox.create_user()
    base = {"user_id": user["user_id"], "company_name": "Acme", "address": ADDRESS}
    wire = sandbox.post(
        "/v1/recipients", {**base, "account": {"account_type": "WIRE", "account_number": "1"}}
    )
    assert wire.status_code == 400
    assert wire.json()["errors"][0]["field"] == "account.routing_number"
    swift = sandbox.post(
        "/v1/recipients", {**base, "account": {"account_type": "SWIFT", "account_number": "1"}}
    )
    assert swift.json()["errors"][0]["field"] == "account.swift_code"
    nameless = sandbox.post(
        "/v1/recipients",
        {
            "user_id": user["user_id"],
            "address": ADDRESS,
            "account": {"account_type": "ACH", "account_number": "1"},
        },
    )
    assert nameless.json()["errors"][0]["field"] == "first_name"


def set_status(control, account_id, status):
    return control.post(f"/_control/virtual-accounts/{account_id}/status", json={"status": status})


def test_control_reaches_frozen_deactivated_and_failed(sandbox, control):
    account_id, recipient_id = sandbox.funded_setup("500.00")
    frozen = set_status(control, account_id, "frozen")
    assert frozen.status_code == 200, frozen.text
    assert frozen.json()["data"]["status"] == "frozen"
    assert sandbox.get(f"/v1/virtual-accounts/{account_id}").json()["data"]["status"] == "frozen"
    refused = sandbox.payout(
        account_id, {"recipient_id": recipient_id, "amount": "10.00"}, "000000"
    )
    assert refused.status_code == 400
    assert refused.json()["code"] == "VIRTUAL_ACCOUNT_NOT_ACTIVE"
    deposit = control.post(
        "/_control/deposits", json={"virtual_account_id": account_id, "amount": "1.00"}
    )
    assert deposit.status_code == 400 and deposit.json()["code"] == "VIRTUAL_ACCOUNT_NOT_ACTIVE"
    assert set_status(control, account_id, "active").json()["data"]["status"] == "active"
    assert sandbox.balance(account_id) == "500.00"
    assert set_status(control, account_id, "deactivated").status_code == 200
    final = set_status(control, account_id, "active")
    assert final.status_code == 409 and final.json()["code"] == "INVALID_STATUS_TRANSITION"

    user = sandbox.create_user("failing@example.com")
    pending = open_account(sandbox, user["user_id"]).json()["data"]
    assert set_status(control, pending["id"], "failed").json()["data"]["status"] == "failed"
    sandbox.advance(5)
    assert sandbox.tick()["activated_accounts"] == 0
    assert sandbox.get(f"/v1/virtual-accounts/{pending['id']}").json()["data"]["status"] == "failed"


def test_account_status_control_rejects_unknown_targets(sandbox, control):
    user = sandbox.create_user()
    account = sandbox.active_account(user["user_id"])
    for status in ("activating", "closed", None):
        response = set_status(control, account["id"], status)
        assert response.status_code == 409, response.text
    assert set_status(control, str(uuid.uuid4()), "frozen").status_code == 404
    unauthenticated = control.post(
        f"/_control/virtual-accounts/{account['id']}/status",
        json={"status": "frozen"},
        headers={"X-Emulator-Token": "wrong"},
    )
    assert unauthenticated.status_code == 401
