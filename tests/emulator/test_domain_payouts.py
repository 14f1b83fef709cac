"""Payouts: preview, initiation rules and errors, sandbox outcomes, crypto deposits, reads."""

import base64
import uuid
from decimal import Decimal

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

DOCUMENT = {
    "type": "invoice",
    "file_name": "invoice.pdf",
    "file": "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.4 invoice").decode(),
}


def step(sandbox, payout_id, seconds=3):
    sandbox.advance(seconds)
    sandbox.tick()
    return sandbox.get(f"/v1/payouts/{payout_id}").json()


def walk(sandbox, payout_id, steps):
    return [step(sandbox, payout_id)["status"] for _ in range(steps)]


def event_names(payout_id):
    from emulator.models import WebhookEvent

    names = []
    for event in WebhookEvent.objects.order_by("created_at", "id"):
        data = event.data.get("data", event.data)
        if data.get("payout_id") == payout_id:
            names.append(event.event)
    return names


def pay(sandbox, amount, setup=None, **extra):
    account_id, recipient_id = setup or sandbox.funded_setup()
    response = sandbox.payout(
        account_id, {"recipient_id": recipient_id, "amount": amount, **extra}, otp=sandbox.otp()
    )
    assert response.status_code == 201, response.text
    return account_id, response.json()["data"]


def test_fiat_payout_debits_amount_plus_fees_and_completes(sandbox, business_hours):
    account_id, data = pay(sandbox, "100.00")
    assert data["status"] == "created"
    assert data["amount"] == "100.00" and data["currency"] == "USD"
    # WIRE: 15.00 fixed + 0.1 % of 100.00 = 15.10; no FX on USD, no penalty at noon.
    assert data["fees"]["total_fees"] == 15.10
    assert data["recipient_amount"] == "100.00"
    assert data["recipient_currency"] == "USD"
    assert data["quote_id"] is None
    assert sandbox.balance(account_id) == "884.90"
    payout = sandbox.get(f"/v1/payouts/{data['id']}").json()
    assert payout["status"] == "CREATED" and payout["fee"] == "15.10"
    sandbox.tick()
    assert sandbox.get(f"/v1/payouts/{data['id']}").json()["status"] == "CREATED"
    assert walk(sandbox, data["id"], 4) == ["PENDING", "PROCESSING", "COMPLETED", "COMPLETED"]
    final = sandbox.get(f"/v1/payouts/{data['id']}").json()
    assert [e["status"] for e in final["events"]] == [
        "CREATED",
        "PENDING",
        "PROCESSING",
        "COMPLETED",
    ]
    assert event_names(data["id"]) == [
        "payout.created",
        "payout.status_changed",
        "payout.status_changed",
        "payout.status_changed",
        "payout.completed",
    ]
    assert sandbox.balance(account_id) == "884.90"


def test_status_changed_event_is_nested(sandbox):
    from emulator.models import WebhookEvent

    _, data = pay(sandbox, "100.00")
    step(sandbox, data["id"])
    event = WebhookEvent.objects.get(event="payout.status_changed")
    assert event.data["event_id"].startswith("evt_")
    assert event.data["event_type"] == "payout.status_changed"
    assert event.data["data"] == {
        "payout_id": data["id"],
        "status": "PENDING",
        "previous_status": "CREATED",
    }


def test_cents_02_go_through_review_to_completed(sandbox):
    _, data = pay(sandbox, "100.02")
    assert walk(sandbox, data["id"], 3) == ["IN_REVIEW", "COMPLETED", "COMPLETED"]


def test_cents_03_fail_in_review_and_give_the_funds_back(sandbox):
    account_id, data = pay(sandbox, "100.03")
    assert Decimal(sandbox.balance(account_id)) < Decimal("1000.00")
    assert walk(sandbox, data["id"], 2) == ["IN_REVIEW", "FAILED"]
    assert sandbox.balance(account_id) == "1000.00"
    assert event_names(data["id"])[-1] == "payout.failed"


def test_cents_04_complete_then_return(sandbox):
    from emulator.models import WebhookEvent

    account_id, data = pay(sandbox, "100.04")
    statuses = walk(sandbox, data["id"], 4)
    assert statuses == ["PENDING", "PROCESSING", "COMPLETED", "FAILED"]
    assert sandbox.balance(account_id) == "1000.00"
    assert event_names(data["id"])[-2:] == ["payout.status_changed", "payout.returned"]
    returned = WebhookEvent.objects.get(event="payout.returned").data
    assert returned["reason"] == "returned" and returned["status"] == "FAILED"


def test_production_ignores_the_sandbox_cents(production):
    _, data = pay(production, "100.03")
    assert walk(production, data["id"], 3) == ["PENDING", "PROCESSING", "COMPLETED"]


def test_step_length_is_a_setting(sandbox, settings):
    settings.EMULATOR_PAYOUT_STEP_SECONDS = 30
    _, data = pay(sandbox, "100.00")
    assert step(sandbox, data["id"], 10)["status"] == "CREATED"
    assert step(sandbox, data["id"], 20)["status"] == "PENDING"


def test_insufficient_funds_leave_balance_and_code_untouched(sandbox):
    account_id, recipient_id = sandbox.funded_setup("100.00")
    code = sandbox.otp()
    body = {"recipient_id": recipient_id, "amount": "90.00"}
    response = sandbox.payout(account_id, body, otp=code)
    assert response.status_code == 422
    assert response.json()["code"] == "INSUFFICIENT_FUNDS"
    assert response.json()["errors"][0]["field"] == "amount"
    assert sandbox.balance(account_id) == "100.00"
    sandbox.deposit(account_id, "10.00")
    assert sandbox.payout(account_id, body, otp=code).status_code == 201


def test_same_key_replays_and_other_body_conflicts(sandbox):
    from emulator.models import Payout

    account_id, recipient_id = sandbox.funded_setup()
    key = str(uuid.uuid4())
    body = {"recipient_id": recipient_id, "amount": "100.00"}
    first = sandbox.payout(account_id, body, otp=sandbox.otp(), key=key)
    again = sandbox.payout(account_id, body, otp="000000", key=key)
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert Payout.objects.count() == 1
    assert sandbox.balance(account_id) == "884.90"
    other = sandbox.payout(account_id, {**body, "amount": "101.00"}, otp=sandbox.otp(), key=key)
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"


def test_payout_needs_an_idempotency_key(sandbox):
    account_id, recipient_id = sandbox.funded_setup()
    response = sandbox.post(
        f"/v1/virtual-accounts/{account_id}/payout",
        {"recipient_id": recipient_id, "amount": "100.00"},
        **{"x-validation-header": sandbox.otp()},
    )
    assert response.status_code == 400
    assert response.json()["code"] == "IDEMPOTENCY_KEY_REQUIRED"


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        (100, "string"),
        ("100.001", "string"),
        ("0", "greater than 0"),
        ("1000000.00", "999999.99"),
        ("-5", "string"),
        (None, "required"),
    ],
)
def test_amount_rules(sandbox, amount, message):
    account_id, recipient_id = sandbox.funded_setup()
    body = {"recipient_id": recipient_id}
    if amount is not None:
        body["amount"] = amount
    response = sandbox.payout(account_id, body, otp=sandbox.otp())
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] == "amount" and message in error["message"]


def test_body_rules_are_reported_per_field(sandbox):
    account_id, _ = sandbox.funded_setup()
    response = sandbox.payout(
        account_id,
        {
            "recipient_id": "not-a-uuid",
            "amount": "100.00",
            "quote_id": str(uuid.uuid4()),
            "client_markup": {"fixed_fee": 1},
            "extra_info": {"memo": "m" * 256, "internal_notes": "n" * 1001},
            "supporting_documents": [{"type": "invoice", "file_name": "a.pdf", "file": "abc"}],
        },
        otp=sandbox.otp(),
    )
    assert response.status_code == 400
    fields = {error["field"] for error in response.json()["errors"]}
    assert fields == {
        "recipient_id",
        "client_markup",
        "extra_info.memo",
        "extra_info.internal_notes",
        "supporting_documents[0].file",
    }


def test_fiat_account_refuses_payment_instructions(sandbox):
    account_id, recipient_id = sandbox.funded_setup()
    response = sandbox.payout(
        account_id,
        {
            "recipient_id": recipient_id,
            "amount": "100.00",
            "payment_instructions": {"network": "tron", "currency": "USDT"},
        },
        otp=sandbox.otp(),
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "payment_instructions"


def test_account_and_recipient_rules(sandbox, control):
    user = sandbox.create_user()
    account = sandbox.post(
        "/v1/virtual-accounts",
        {"user_id": user["user_id"], "type": "US_BANK", "bank": "slovak_savings_bank"},
    ).json()["data"]
    wire = sandbox.recipient(user["user_id"])
    spei = sandbox.recipient(user["user_id"], "SPEI")
    body = {"recipient_id": wire["recipient_id"], "amount": "100.00"}
    inactive = sandbox.payout(account["id"], body, otp=sandbox.otp())
    assert inactive.status_code == 400 and inactive.json()["code"] == "VIRTUAL_ACCOUNT_NOT_ACTIVE"
    missing = sandbox.payout(str(uuid.uuid4()), body, otp=sandbox.otp())
    assert missing.status_code == 404 and missing.json()["code"] == "VIRTUAL_ACCOUNT_NOT_FOUND"
    sandbox.advance(5)
    sandbox.tick()
    control.post("/_control/deposits", json={"virtual_account_id": account["id"], "amount": "500"})
    wrong_rail = sandbox.payout(
        account["id"], {**body, "recipient_id": spei["recipient_id"]}, otp=sandbox.otp()
    )
    assert wrong_rail.status_code == 400 and wrong_rail.json()["code"] == "INVALID_RECIPIENT_TYPE"
    unknown = sandbox.payout(
        account["id"], {**body, "recipient_id": str(uuid.uuid4())}, otp=sandbox.otp()
    )
    assert unknown.status_code == 404 and unknown.json()["code"] == "RECIPIENT_NOT_FOUND"


def test_a_small_wire_payout_whose_fees_exceed_its_amount_succeeds_when_funded(
    sandbox, business_hours
):
    # Fees are on top (decisions.md "Payout pricing"): 10.00 + 15.01 (15.00 fixed + 0.1 %).
    account_id, recipient_id = sandbox.funded_setup(balance="25.01")
    response = sandbox.payout(
        account_id, {"recipient_id": recipient_id, "amount": "10.00"}, otp=sandbox.otp()
    )
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert data["amount"] == "10.00" and data["fees"]["total_fees"] == 15.01
    assert data["recipient_amount"] == "10.00"
    assert sandbox.balance(account_id) == "0.00"


def test_a_small_wire_payout_the_balance_cannot_cover_is_insufficient_funds(
    sandbox, business_hours
):
    account_id, recipient_id = sandbox.funded_setup(balance="25.00")  # one cent short
    response = sandbox.payout(
        account_id, {"recipient_id": recipient_id, "amount": "10.00"}, otp=sandbox.otp()
    )
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "INSUFFICIENT_FUNDS"
    assert sandbox.balance(account_id) == "25.00"


@pytest.mark.parametrize("amount", ["10.00", "100.00"])
def test_preview_and_initiation_give_the_same_figures(sandbox, business_hours, amount):
    account_id, recipient_id = sandbox.funded_setup()
    body = {"recipient_id": recipient_id, "amount": amount}
    preview = sandbox.post(f"/v1/virtual-accounts/{account_id}/payout/preview", body)
    assert preview.status_code == 200, preview.text
    reserved = sandbox.post(
        f"/v1/virtual-accounts/{account_id}/payout/preview", {**body, "create_quote": True}
    )
    assert reserved.status_code == 200, reserved.text
    initiated = sandbox.payout(account_id, body, otp=sandbox.otp())
    assert initiated.status_code == 201, initiated.text
    before = Decimal("1000.00")
    for figures in (preview.json()["data"], reserved.json()["data"]):
        data = initiated.json()["data"]
        assert figures["fees"] == data["fees"]
        assert figures["recipient_amount"] == data["recipient_amount"]
        total = Decimal(figures["total_amount"])
        assert total == Decimal(amount) + Decimal(str(data["fees"]["total_fees"]))
    assert Decimal(sandbox.balance(account_id)) == before - total
    # The reserved quote pays the same too.
    quoted = sandbox.payout(
        account_id,
        {**body, "quote_id": reserved.json()["data"]["quote_id"]},
        otp=sandbox.otp(),
    )
    assert quoted.status_code == 201, quoted.text
    assert quoted.json()["data"]["fees"] == initiated.json()["data"]["fees"]


def test_client_markup_is_added_to_the_fees(sandbox, business_hours):
    _, data = pay(
        sandbox,
        "200.00",
        client_markup={"fixed_fee": 2, "percentage_fee": 0.01, "fx_markup": 0},
        extra_info={"memo": "invoice 7"},
        reference="INV-7",
    )
    # 15.00 + 2.00 fixed, (0.001 + 0.01) x 200.00 = 2.20.
    assert data["fees"]["total_fees"] == 19.20
    assert data["fees"]["client_markup"]["fixed_fee"] == 2


def test_preview_and_quote_reservation(sandbox, business_hours):
    account_id, recipient_id = sandbox.funded_setup()
    plain = sandbox.post(
        f"/v1/virtual-accounts/{account_id}/payout/preview",
        {"amount": "100.00", "recipient_id": recipient_id},
    )
    assert plain.status_code == 200, plain.text
    preview = plain.json()["data"]
    assert preview["fees"]["total_fees"] == 15.10
    assert preview["recipient_amount"] == "100.00" and "quote_id" not in preview
    reserved = sandbox.post(
        "/payout/preview",
        {
            "virtual_account_id": account_id,
            "amount": "100.00",
            "recipient_id": recipient_id,
            "create_quote": True,
        },
    ).json()["data"]
    quote_id = reserved["quote_id"]
    assert reserved["quote_expires_at"].endswith("Z")
    quote = sandbox.get(f"/v1/quotations/{quote_id}").json()["data"]
    assert quote["status"] == "ACTIVE"
    body = {"recipient_id": recipient_id, "amount": "100.00", "quote_id": quote_id}
    created = sandbox.payout(account_id, body, otp=sandbox.otp())
    assert created.status_code == 201, created.text
    assert created.json()["data"]["quote_id"] == quote_id
    assert sandbox.get(f"/v1/quotations/{quote_id}").json()["data"]["status"] == "USED"
    used = sandbox.payout(account_id, body, otp=sandbox.otp())
    assert used.status_code == 400
    assert used.json()["error"]["code"] == "QUOTE_INVALID_STATE"


def test_preview_quote_lives_fifteen_minutes(sandbox):
    account_id, recipient_id = sandbox.funded_setup()
    quote_id = sandbox.post(
        f"/v1/virtual-accounts/{account_id}/payout/preview",
        {"amount": "100.00", "recipient_id": recipient_id, "create_quote": True},
    ).json()["data"]["quote_id"]
    sandbox.advance(14 * 60)
    assert sandbox.get(f"/v1/quotations/{quote_id}").json()["data"]["status"] == "ACTIVE"
    sandbox.advance(61)
    body = {"recipient_id": recipient_id, "amount": "100.00", "quote_id": quote_id}
    expired = sandbox.payout(account_id, body, otp=sandbox.otp())
    assert expired.json()["error"]["code"] == "QUOTE_INVALID_STATE"
    assert sandbox.balance(account_id) == "1000.00"


def test_quote_must_fit_the_payout_and_the_client(sandbox, http, authed):
    from tests.emulator.conftest import make_credentials

    account_id, recipient_id = sandbox.funded_setup()
    quote_id = sandbox.post(
        f"/v1/virtual-accounts/{account_id}/payout/preview",
        {"amount": "100.00", "recipient_id": recipient_id, "create_quote": True},
    ).json()["data"]["quote_id"]
    mismatch = sandbox.payout(
        account_id,
        {"recipient_id": recipient_id, "amount": "120.00", "quote_id": quote_id},
        otp=sandbox.otp(),
    )
    assert mismatch.status_code == 400 and mismatch.json()["code"] == "QUOTE_MISMATCH"
    other = authed("sandbox", make_credentials("other", rate_per_second=1000, max_concurrent=50))
    foreign = http.post(
        "/sandbox/v1/quotations",
        json={"quote_currency": "USD", "amount": 100, "account_type": "WIRE"},
        headers=other,
    ).json()["data"]["quote_id"]
    response = sandbox.payout(
        account_id,
        {"recipient_id": recipient_id, "amount": "100.00", "quote_id": foreign},
        otp=sandbox.otp(),
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "QUOTE_NOT_FOUND"


def crypto_setup(sandbox):
    user = sandbox.create_user()
    account = sandbox.active_account(user["user_id"], mode="crypto")
    recipient = sandbox.recipient(user["user_id"], "SWIFT")
    return account["id"], recipient["recipient_id"]


def crypto_body(recipient_id, **extra):
    return {
        "recipient_id": recipient_id,
        "amount": "500.00",
        "payment_instructions": {"network": "tron", "currency": "USDT"},
        "supporting_documents": [DOCUMENT],
        **extra,
    }


def test_crypto_payout_waits_for_the_deposit_then_completes(sandbox, control):
    account_id, recipient_id = crypto_setup(sandbox)
    response = sandbox.payout(account_id, crypto_body(recipient_id))
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    instructions = data["deposit_instructions"]
    assert instructions["network"] == "tron" and instructions["currency"] == "USDT"
    assert instructions["wallet_address"].startswith("T")
    assert Decimal(instructions["amount"]) == Decimal("500.00") + Decimal(
        str(data["fees"]["total_fees"])
    )
    assert data["fees"]["network_fee"] == 1.0
    assert step(sandbox, data["id"])["status"] == "CREATED"
    short = control.post(f"/_control/payouts/{data['id']}/deposit", json={"amount": "100.00"})
    assert short.status_code == 200 and short.json()["status"] == "CREATED"
    assert step(sandbox, data["id"])["status"] == "CREATED"
    rest = Decimal(instructions["amount"]) - Decimal("100.00")
    control.post(f"/_control/payouts/{data['id']}/deposit", json={"amount": str(rest)})
    sandbox.tick()
    statuses = [sandbox.get(f"/v1/payouts/{data['id']}").json()["status"]]
    statuses += walk(sandbox, data["id"], 2)
    assert statuses == ["KYT_PENDING", "PROCESSING", "COMPLETED"]
    assert event_names(data["id"])[:2] == ["payout.created", "payout.deposit_received"]
    assert event_names(data["id"])[-1] == "payout.completed"
    assert sandbox.get(f"/v1/payouts/{data['id']}").json()["uetr"]


def test_crypto_deposit_address_expires_after_an_hour(sandbox, control):
    account_id, recipient_id = crypto_setup(sandbox)
    payout_id = sandbox.payout(account_id, crypto_body(recipient_id)).json()["data"]["id"]
    sandbox.advance(3600)
    sandbox.tick()
    payout = sandbox.get(f"/v1/payouts/{payout_id}").json()
    assert payout["status"] == "CANCELLED"
    assert payout["failure_reason"] == "deposit_address_expired"
    late = control.post(f"/_control/payouts/{payout_id}/deposit", json={"amount": "600"})
    assert late.status_code == 409


def test_crypto_rules(sandbox):
    account_id, recipient_id = crypto_setup(sandbox)
    no_instructions = sandbox.payout(
        account_id,
        {"recipient_id": recipient_id, "amount": "500.00", "supporting_documents": [DOCUMENT]},
    )
    assert no_instructions.status_code == 400
    assert no_instructions.json()["errors"][0]["field"] == "payment_instructions"
    no_documents = sandbox.payout(account_id, crypto_body(recipient_id, supporting_documents=[]))
    assert no_documents.json()["errors"][0]["field"] == "supporting_documents"
    bad_network = sandbox.payout(
        account_id,
        crypto_body(recipient_id, payment_instructions={"network": "solana", "currency": "USDT"}),
    )
    assert bad_network.json()["errors"][0]["field"] == "payment_instructions.network"


def test_get_payout_of_another_client_is_forbidden(sandbox, http, authed):
    from tests.emulator.conftest import make_credentials

    _, data = pay(sandbox, "100.00")
    other = authed("sandbox", make_credentials("other", rate_per_second=1000, max_concurrent=50))
    assert http.get(f"/sandbox/v1/payouts/{data['id']}", headers=other).status_code == 403
    unknown = sandbox.get(f"/v1/payouts/{uuid.uuid4()}")
    assert unknown.status_code == 404 and unknown.json()["code"] == "PAYOUT_NOT_FOUND"


def test_list_filters_and_pages(sandbox):
    setup = sandbox.funded_setup("5000.00")
    ids = [pay(sandbox, amount, setup)[1]["id"] for amount in ("100.00", "100.03", "100.00")]
    walk(sandbox, ids[1], 2)
    listed = sandbox.get("/v1/payouts", limit=2).json()
    assert listed["total"] == 3 and listed["total_pages"] == 2 and len(listed["payouts"]) == 2
    assert sandbox.get("/v1/payouts", page=2, limit=2).json()["payouts"][0]["payout_id"] == ids[0]
    failed = sandbox.get("/v1/payouts", status="FAILED").json()
    assert [p["payout_id"] for p in failed["payouts"]] == [ids[1]]
    assert sandbox.get("/v1/payouts", from_date="2999-01-01").json()["total"] == 0
    assert sandbox.get("/v1/payouts", to_date="2999-01-01").json()["total"] == 3
    assert sandbox.get("/v1/payouts", limit=101).status_code == 400
    unknown = sandbox.get("/v1/payouts", sort="amount")
    assert unknown.status_code == 400 and unknown.json()["errors"][0]["field"] == "sort"


def test_control_deposit_errors(sandbox, control):
    _, fiat = pay(sandbox, "100.00")
    not_crypto = control.post(f"/_control/payouts/{fiat['id']}/deposit", json={"amount": "1"})
    assert not_crypto.status_code == 409
    assert not_crypto.json()["code"] == "PAYOUT_NOT_AWAITING_DEPOSIT"
    account_id, recipient_id = crypto_setup(sandbox)
    first = sandbox.payout(account_id, crypto_body(recipient_id)).json()["data"]
    full = first["deposit_instructions"]["amount"]
    assert control.post(
        f"/_control/payouts/{first['id']}/deposit", json={"amount": full}
    ).is_success
    twice = control.post(f"/_control/payouts/{first['id']}/deposit", json={"amount": full})
    assert twice.status_code == 409 and twice.json()["code"] == "DEPOSIT_ALREADY_RECEIVED"
    second = sandbox.payout(account_id, crypto_body(recipient_id)).json()["data"]
    sandbox.advance(3600)
    late = control.post(f"/_control/payouts/{second['id']}/deposit", json={"amount": full})
    assert late.status_code == 409 and late.json()["code"] == "DEPOSIT_ADDRESS_EXPIRED"
    bad = control.post(f"/_control/payouts/{second['id']}/deposit", json={"amount": "-1"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "amount"
    unknown = control.post(f"/_control/payouts/{uuid.uuid4()}/deposit", json={"amount": "1"})
    assert unknown.status_code == 404 and unknown.json()["code"] == "PAYOUT_NOT_FOUND"


def test_preview_errors(sandbox):
    account_id, recipient_id = sandbox.funded_setup()
    no_account = sandbox.post("/payout/preview", {"amount": "100.00", "recipient_id": recipient_id})
    assert no_account.status_code == 400
    assert no_account.json()["errors"][0]["field"] == "virtual_account_id"
    bad = sandbox.post(
        f"/v1/virtual-accounts/{account_id}/payout/preview",
        {"amount": 100, "create_quote": "yes"},
    )
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"amount", "recipient_id", "create_quote"}
