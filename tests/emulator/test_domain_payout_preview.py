"""Payout preview in both modes: the preview prices exactly what the initiation then charges.

decisions.md 2 "Payout pricing": in crypto mode the preview takes the same `payment_instructions`
as the initiation, its fees include the network's `network_fee`, and the deposit to send is
`amount + total_fees` in that stablecoin; preview and initiation give the same figures.
"""

import base64
from decimal import Decimal

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

# (stablecoin, network, its network fee in emulator/domain/corridors.py NETWORK_FEES)
DOCUMENT = {
    "type": "invoice",
    "file_name": "invoice.pdf",
    "file": "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.4 invoice").decode(),
}
NETWORKS = [("USDC", "solana", "0.50"), ("USDC", "polygon", "0.20"), ("USDT", "tron", "1.00")]


@pytest.fixture
def five_to_six(control):
    """The emulator's clock at a weekday 17:55 in New York: ten minutes later is off-hours."""
    from tests.emulator.conftest import business_hours_seconds

    now = control.get("/_control/clock").json()["now"]
    noon = business_hours_seconds(now)
    control.post("/_control/clock", json={"advance_seconds": noon + 5 * 3600 + 55 * 60})


def crypto_setup(sandbox):
    user = sandbox.create_user()
    account = sandbox.active_account(str(user["user_id"]), mode="crypto")
    recipient = sandbox.recipient(str(user["user_id"]), "WIRE")
    return str(account["id"]), str(recipient["recipient_id"])


def preview(sandbox, account_id, body):
    response = sandbox.post(f"/v1/virtual-accounts/{account_id}/payout/preview", body)
    assert response.status_code == 200, response.text
    return response.json()["data"]


@pytest.mark.parametrize(("currency", "network", "network_fee"), NETWORKS)
def test_crypto_preview_includes_the_network_fee_and_equals_the_initiation(
    sandbox, business_hours, currency, network, network_fee
):
    account_id, recipient_id = crypto_setup(sandbox)
    instructions = {"network": network, "currency": currency}
    body = {"recipient_id": recipient_id, "amount": "539.00", "payment_instructions": instructions}
    shown = preview(sandbox, account_id, body)
    # USD WIRE profile: 15.00 + 0.1 % of 539.00 = 15.54, plus the network's fee.
    expected_fees = Decimal("15.54") + Decimal(network_fee)
    assert Decimal(str(shown["fees"]["network_fee"])) == Decimal(network_fee)
    assert Decimal(str(shown["fees"]["total_fees"])) == expected_fees
    created = sandbox.payout(account_id, {**body, "supporting_documents": [DOCUMENT]})
    assert created.status_code == 201, created.text
    charged = created.json()["data"]
    assert charged["fees"] == shown["fees"]
    assert charged["amount"] == shown["amount"] == "539.00"
    assert charged["recipient_amount"] == shown["recipient_amount"]
    deposit = charged["deposit_instructions"]
    assert (deposit["currency"], deposit["network"]) == (currency, network)
    assert Decimal(deposit["amount"]) == Decimal("539.00") + expected_fees


@pytest.mark.parametrize("mode", ["fiat", "crypto"])
def test_preview_equals_initiation_in_both_modes(sandbox, business_hours, mode):
    if mode == "fiat":
        account_id, recipient_id = sandbox.funded_setup()
        extra, otp = {}, sandbox.otp
    else:
        account_id, recipient_id = crypto_setup(sandbox)
        extra = {"payment_instructions": {"network": "polygon", "currency": "USDC"}}
        otp = None
    body = {"recipient_id": recipient_id, "amount": "210.00", **extra}
    shown = preview(sandbox, account_id, body)
    documents = {"supporting_documents": [DOCUMENT]} if mode == "crypto" else {}
    created = sandbox.payout(account_id, {**body, **documents}, otp=otp() if otp else None)
    assert created.status_code == 201, created.text
    charged = created.json()["data"]
    for figure in ("amount", "currency", "fees", "recipient_amount", "recipient_currency"):
        assert charged[figure] == shown[figure], figure
    total = Decimal(shown["amount"]) + Decimal(str(shown["fees"]["total_fees"]))
    if mode == "crypto":
        assert Decimal(charged["deposit_instructions"]["amount"]) == total
    else:
        assert "network_fee" not in shown["fees"]
        assert Decimal(sandbox.balance(account_id)) == Decimal("1000.00") - total


def test_preview_checks_the_mode_as_the_initiation_does(sandbox):
    account_id, recipient_id = crypto_setup(sandbox)
    missing = sandbox.post(
        f"/v1/virtual-accounts/{account_id}/payout/preview",
        {"recipient_id": recipient_id, "amount": "100.00"},
    )
    assert missing.status_code == 400, missing.text
    assert [e["field"] for e in missing.json()["errors"]] == ["payment_instructions"]
    wrong = sandbox.post(
        f"/v1/virtual-accounts/{account_id}/payout/preview",
        {
            "recipient_id": recipient_id,
            "amount": "100.00",
            "payment_instructions": {"network": "solana", "currency": "USDT"},
        },
    )
    assert wrong.status_code == 400
    assert wrong.json()["errors"][0]["field"] == "payment_instructions.network"
    fiat_account, fiat_recipient = sandbox.funded_setup()
    fiat = sandbox.post(
        f"/v1/virtual-accounts/{fiat_account}/payout/preview",
        {
            "recipient_id": fiat_recipient,
            "amount": "100.00",
            "payment_instructions": {"network": "solana", "currency": "USDC"},
        },
    )
    assert fiat.status_code == 400
    assert fiat.json()["errors"][0]["field"] == "payment_instructions"


def test_a_crypto_reserved_quote_is_redeemed_by_the_crypto_payout(five_to_six, sandbox):
    account_id, recipient_id = crypto_setup(sandbox)
    instructions = {"network": "polygon", "currency": "USDC"}
    body = {"recipient_id": recipient_id, "amount": "539.00", "payment_instructions": instructions}
    reserved = preview(sandbox, account_id, {**body, "create_quote": True})
    quote = sandbox.get(f"/v1/quotations/{reserved['quote_id']}").json()["data"]
    assert (quote["base_currency"], quote["network"]) == ("USDC", "polygon")
    assert quote["fees"]["network_fee"] == 0.2
    sandbox.advance(10 * 60)  # 18:05, off-hours: a fresh price has the penalty, the quote not
    assert preview(sandbox, account_id, body)["recipient_amount"] != reserved["recipient_amount"]
    created = sandbox.payout(
        account_id,
        {**body, "quote_id": reserved["quote_id"], "supporting_documents": [DOCUMENT]},
    )
    assert created.status_code == 201, created.text
    charged = created.json()["data"]
    assert charged["quote_id"] == reserved["quote_id"]
    assert charged["fees"] == reserved["fees"]
    assert charged["recipient_amount"] == reserved["recipient_amount"]
    assert charged["deposit_instructions"]["amount"] == "554.74"
    used = sandbox.get(f"/v1/quotations/{reserved['quote_id']}").json()["data"]
    assert used["status"] == "USED"


def test_a_crypto_quote_reserved_on_another_network_does_not_fit(sandbox):
    account_id, recipient_id = crypto_setup(sandbox)
    body = {
        "recipient_id": recipient_id,
        "amount": "100.00",
        "payment_instructions": {"network": "solana", "currency": "USDC"},
    }
    reserved = preview(sandbox, account_id, {**body, "create_quote": True})
    other = sandbox.payout(
        account_id,
        {
            **body,
            "payment_instructions": {"network": "polygon", "currency": "USDC"},
            "quote_id": reserved["quote_id"],
            "supporting_documents": [DOCUMENT],
        },
    )
    assert other.status_code == 400, other.text
    assert other.json()["code"] == "QUOTE_MISMATCH"
    assert other.json()["errors"][0]["field"] == "quote_id"
