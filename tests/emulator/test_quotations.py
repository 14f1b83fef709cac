"""/v1/quotations over real HTTP: every documented error, states, expiry and re-pricing."""

import uuid

import pytest

from emulator.domain.quotations import quote_use
from emulator.models import Quote
from tests.emulator.conftest import make_credentials
from tests.emulator.helpers import move_clock_to_business_hours

pytestmark = pytest.mark.django_db(transaction=True)

ALL_QUOTE_CURRENCIES = [
    "MXN", "COP", "ARS", "BRL", "CLP", "PEN", "UYU",
    "GTQ", "CRC", "DOP", "PYG", "USD", "USDC", "USDT",
]  # fmt: skip


@pytest.fixture
def sandbox(authed):
    return authed("sandbox")


def _to_business_hours(headers, authed):
    """The emulator's clock to a weekday noon in New York, and a new token: from a Friday evening
    that is Monday, past the token `headers` carries."""
    move_clock_to_business_hours()
    headers.update(authed("sandbox"))


def create(http, headers, body, prefix="/sandbox"):
    return http.post(prefix + "/v1/quotations", json=body, headers=headers)


def test_create_quote_business_hours_figures(http, sandbox, authed):
    _to_business_hours(sandbox, authed)
    response = create(http, sandbox, {"quote_currency": "MXN", "amount": 100})
    assert response.status_code == 201
    data = response.json()["data"]
    assert data["base_currency"] == "USD"
    assert data["account_type"] == "SPEI"
    assert "network" not in data
    assert data["status"] == "ACTIVE"
    assert (data["base_amount"], data["quote_amount"]) == (100.0, 1694.03)
    assert (data["rate"], data["service_rate"]) == (17.25, 17.19825)
    assert data["fees"] == {
        "base_fees": {"fixed_fee": 1.0, "percentage_fee": 0.005, "fx_markup": 0.003},
        "client_markup": {"fixed_fee": 0.0, "percentage_fee": 0.0, "fx_markup": 0.0},
        "penalty_markup": 0.0,
        "total_fees": 1.5,
    }
    assert data["expiration_ts"].endswith("Z") and len(data["expiration_ts"]) == 24
    uuid.UUID(data["quote_id"])


def test_create_quote_stablecoin_has_network_and_network_fee(http, sandbox, authed):
    _to_business_hours(sandbox, authed)
    response = create(
        http, sandbox, {"base_currency": "USDT", "quote_currency": "USD", "amount": 1000,
                        "account_type": "WIRE"},
    )  # fmt: skip
    data = response.json()["data"]
    assert response.status_code == 201
    assert data["network"] == "tron"
    assert data["fees"]["network_fee"] == 1.0
    assert data["fees"]["total_fees"] == 17.0  # 15.00 + 1.00 + 1000 x 0.001
    assert data["quote_amount"] == 983.0


def test_amount_in_destination(http, sandbox, authed):
    _to_business_hours(sandbox, authed)
    response = create(
        http, sandbox, {"quote_currency": "MXN", "amount": 1000, "amount_in_destination": True}
    )
    data = response.json()["data"]
    assert (data["base_amount"], data["quote_amount"]) == (59.45, 1000.0)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"amount": 100},
            {"error": "quote_currency is required", "valid_quote_currencies": ALL_QUOTE_CURRENCIES},
        ),
        (
            {"quote_currency": "EUR", "amount": 100},
            {"error": "invalid quote_currency", "valid_quote_currencies": ALL_QUOTE_CURRENCIES},
        ),
        (
            {"quote_currency": "MXN"},
            {"error": "amount is required", "valid_quote_currencies": ALL_QUOTE_CURRENCIES},
        ),
        (
            {"quote_currency": "MXN", "amount": -5},
            {"error": "amount must be a positive number",
             "valid_quote_currencies": ALL_QUOTE_CURRENCIES},
        ),
        (
            {"quote_currency": "MXN", "amount": "100"},
            {"error": "amount must be a number", "valid_quote_currencies": ALL_QUOTE_CURRENCIES},
        ),
        (
            {"quote_currency": "MXN", "amount": 100, "account_type": "ACH"},
            {"error": "invalid account_type for the currency", "valid_account_types": ["SPEI"]},
        ),
        (
            {"quote_currency": "COP", "amount": 100, "account_type": "SPEI"},
            {"error": "invalid account_type for the currency",
             "valid_account_types": ["PSE", "WALLET"]},
        ),
        (
            {"base_currency": "USDT", "quote_currency": "MXN", "amount": 100, "network": "solana"},
            {"error": "invalid network for the base currency",
             "valid_networks": ["tron", "polygon"]},
        ),
        (
            {"base_currency": "USDC", "quote_currency": "MXN", "amount": 100, "network": "tron"},
            {"error": "invalid network for the base currency",
             "valid_networks": ["solana", "polygon"]},
        ),
        (
            {"quote_currency": "MXN", "amount": 100, "network": "tron"},
            {"error": "invalid network for the base currency", "valid_networks": []},
        ),
        (
            {"base_currency": "EUR", "quote_currency": "MXN", "amount": 100},
            {"error": "invalid base_currency", "valid_base_currencies": ["USD", "USDC", "USDT"]},
        ),
    ],
)  # fmt: skip
def test_validation_errors(http, sandbox, body, expected):
    response = create(http, sandbox, body)
    assert (response.status_code, response.json()) == (400, expected)


def test_body_that_is_not_json(http, sandbox):
    response = http.post(
        "/sandbox/v1/quotations",
        content=b"{not json",
        headers={**sandbox, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["valid_quote_currencies"] == ALL_QUOTE_CURRENCIES


def test_business_errors(http, sandbox, authed):
    _to_business_hours(sandbox, authed)
    pair = create(
        http, sandbox,
        {"base_currency": "USDC", "quote_currency": "USDT", "amount": 50},
    )  # fmt: skip
    assert (pair.status_code, pair.json()) == (
        400,
        {"error": {"code": "CURRENCY_PAIR_NOT_ENABLED",
                   "message": "currency pair is not enabled for this account type",
                   "details": {"base_currency": "USDC", "quote_currency": "USDT",
                               "account_type": "WALLET"}}},
    )  # fmt: skip
    fees = create(http, sandbox, {"quote_currency": "USD", "account_type": "SWIFT", "amount": 20})
    assert fees.status_code == 409
    assert fees.json()["error"]["code"] == "FEES_EXCEED_AMOUNT"
    assert fees.json()["error"]["details"] == {"amount": 20.0, "total_fees": 25.04}
    small = create(
        http, sandbox, {"quote_currency": "MXN", "amount": 10, "amount_in_destination": True}
    )
    assert small.status_code == 400
    assert small.json()["error"]["code"] == "INVALID_CALCULATED_AMOUNT"
    assert small.json()["error"]["details"] == {
        "requested_amount": 10.0,
        "calculated_base_amount": 1.6,
    }
    assert Quote.objects.count() == 0


def test_get_quote_and_not_found_rules(http, authed, sandbox):
    created = create(http, sandbox, {"quote_currency": "BRL", "amount": 250}).json()["data"]
    got = http.get(f"/sandbox/v1/quotations/{created['quote_id']}", headers=sandbox)
    assert (got.status_code, got.json()["data"]) == (200, created)
    not_found = {"error": {"code": "QUOTE_NOT_FOUND", "message": "quote not found"}}
    unknown = http.get(f"/sandbox/v1/quotations/{uuid.uuid4()}", headers=sandbox)
    assert (unknown.status_code, unknown.json()) == (404, not_found)
    garbage = http.get("/sandbox/v1/quotations/not-a-uuid", headers=sandbox)
    assert (garbage.status_code, garbage.json()) == (404, not_found)
    other = make_credentials("other", rate_per_second=1000, max_concurrent=50)
    theirs = http.get(
        f"/sandbox/v1/quotations/{created['quote_id']}", headers=authed("sandbox", other)
    )
    assert (theirs.status_code, theirs.json()) == (404, not_found)
    production = http.get(f"/v1/quotations/{created['quote_id']}", headers=authed("production"))
    assert (production.status_code, production.json()) == (404, not_found)


def test_quote_expires_after_ten_minutes_on_the_clock(http, control, sandbox):
    quote_id = create(http, sandbox, {"quote_currency": "MXN", "amount": 100}).json()["data"][
        "quote_id"
    ]
    control.post("/_control/clock", json={"advance_seconds": 590})
    assert (
        http.get(f"/sandbox/v1/quotations/{quote_id}", headers=sandbox).json()["data"]["status"]
        == "ACTIVE"
    )
    control.post("/_control/clock", json={"advance_seconds": 11})
    got = http.get(f"/sandbox/v1/quotations/{quote_id}", headers=sandbox).json()["data"]
    assert got["status"] == "EXPIRED"
    assert Quote.objects.get(quote_id=quote_id).status == "EXPIRED"
    patched = http.patch(f"/sandbox/v1/quotations/{quote_id}", json={"amount": 50}, headers=sandbox)
    assert patched.status_code == 400
    assert patched.json()["error"]["code"] == "QUOTE_INVALID_STATE"


def test_patch_reprices_and_resets_the_timer(http, control, sandbox, authed):
    _to_business_hours(sandbox, authed)
    first = create(http, sandbox, {"quote_currency": "MXN", "amount": 100}).json()["data"]
    control.post("/_control/clock", json={"advance_seconds": 400})
    patched = http.patch(
        f"/sandbox/v1/quotations/{first['quote_id']}", json={"amount": 200}, headers=sandbox
    )
    assert patched.status_code == 200
    data = patched.json()["data"]
    # 200 - (1.00 + 1.00) = 198.00 x 17.19825 = 3405.2535 -> 3405.25
    assert (data["base_amount"], data["quote_amount"]) == (200.0, 3405.25)
    assert data["fees"]["total_fees"] == 2.0
    assert data["expiration_ts"] > first["expiration_ts"]
    control.post("/_control/clock", json={"advance_seconds": 500})  # 900 s after creation
    still = http.get(f"/sandbox/v1/quotations/{first['quote_id']}", headers=sandbox).json()
    assert still["data"]["status"] == "ACTIVE"
    control.post("/_control/clock", json={"advance_seconds": 101})
    later = http.get(f"/sandbox/v1/quotations/{first['quote_id']}", headers=sandbox).json()
    assert later["data"]["status"] == "EXPIRED"


def test_patch_validation(http, sandbox):
    quote_id = create(http, sandbox, {"quote_currency": "MXN", "amount": 100}).json()["data"][
        "quote_id"
    ]
    bad = http.patch(f"/sandbox/v1/quotations/{quote_id}", json={"amount": 0}, headers=sandbox)
    assert bad.status_code == 400
    assert bad.json()["error"] == "amount must be a positive number"
    missing = http.patch(
        f"/sandbox/v1/quotations/{uuid.uuid4()}", json={"amount": 5}, headers=sandbox
    )
    assert missing.status_code == 404


def test_used_quote_rules(http, api_client, sandbox):
    from emulator.errors import EmulatorError
    from emulator.models import ApiClient

    client = ApiClient.objects.get(pk=api_client.pk)
    quote_id = create(http, sandbox, {"quote_currency": "MXN", "amount": 100}).json()["data"][
        "quote_id"
    ]
    other = ApiClient.objects.get(pk=make_credentials("other").pk)
    with pytest.raises(EmulatorError) as theirs:
        quote_use(quote_id, other, "sandbox")
    assert theirs.value.status == 404
    with pytest.raises(EmulatorError) as wrong_env:
        quote_use(quote_id, client, "production")
    assert wrong_env.value.status == 404
    used = quote_use(quote_id, client, "sandbox")
    assert used.status == "USED" and used.used_at is not None
    with pytest.raises(EmulatorError) as again:
        quote_use(quote_id, client, "sandbox")
    assert (again.value.status, again.value.body["error"]["code"]) == (400, "QUOTE_INVALID_STATE")
    got = http.get(f"/sandbox/v1/quotations/{quote_id}", headers=sandbox).json()["data"]
    assert got["status"] == "USED"
    patched = http.patch(f"/sandbox/v1/quotations/{quote_id}", json={"amount": 5}, headers=sandbox)
    assert patched.json()["error"]["code"] == "QUOTE_INVALID_STATE"


def test_expired_quote_cannot_be_used(http, api_client, sandbox):
    from emulator import clock
    from emulator.errors import EmulatorError
    from emulator.models import ApiClient

    quote_id = create(http, sandbox, {"quote_currency": "MXN", "amount": 100}).json()["data"][
        "quote_id"
    ]
    clock.advance(600)
    with pytest.raises(EmulatorError) as caught:
        quote_use(quote_id, ApiClient.objects.get(pk=api_client.pk), "sandbox")
    assert caught.value.body["error"]["code"] == "QUOTE_INVALID_STATE"
