"""OTP codes: sending to the mailbox, 10-minute expiry, blocking after 5 wrong tries, single use."""

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_send_delivers_a_six_digit_code_to_the_mailbox(sandbox, control):
    response = sandbox.post("/verification/send", {"email": "ops@example.com"})
    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True and body["message"]
    assert body["expiresAt"].endswith("Z")
    sandbox.post("/verification/send", {"email": "ops@example.com"})
    messages = control.get("/_control/mailbox", params={"email": "ops@example.com"}).json()
    codes = [message["code"] for message in messages["messages"]]
    assert len(codes) == 2
    assert all(len(code) == 6 and code.isdigit() for code in codes)
    assert codes[0] in messages["messages"][0]["body"]


def test_send_refuses_a_bad_email(sandbox):
    response = sandbox.post("/verification/send", {"email": "nope"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "email"


def test_mailbox_needs_the_control_token(http):
    assert http.get("/_control/mailbox", params={"email": "x@example.com"}).status_code == 401


def test_code_is_consumed_by_a_payout(sandbox, business_hours):
    account_id, recipient_id = sandbox.funded_setup()
    code = sandbox.otp()
    body = {"recipient_id": recipient_id, "amount": "100.00"}
    assert sandbox.payout(account_id, body, otp=code).status_code == 201
    reused = sandbox.payout(account_id, body, otp=code)
    assert reused.status_code == 400
    assert reused.json()["code"] == "OTP_REQUIRED"


def test_code_expires_after_ten_minutes(sandbox):
    account_id, recipient_id = sandbox.funded_setup()
    code = sandbox.otp()
    sandbox.advance(600)
    response = sandbox.payout(account_id, {"recipient_id": recipient_id, "amount": "100.00"}, code)
    assert response.status_code == 400
    assert response.json()["code"] == "OTP_EXPIRED"


def test_five_wrong_codes_block_the_code(sandbox):
    account_id, recipient_id = sandbox.funded_setup()
    code = sandbox.otp()
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    body = {"recipient_id": recipient_id, "amount": "100.00"}
    for _ in range(5):
        response = sandbox.payout(account_id, body, otp=wrong)
        assert response.json()["code"] == "INVALID_OTP"
    blocked = sandbox.payout(account_id, body, otp=code)
    assert blocked.status_code == 400
    assert blocked.json()["code"] == "OTP_BLOCKED"
    assert sandbox.balance(account_id) == "1000.00"
    fresh = sandbox.otp()
    assert sandbox.payout(account_id, body, otp=fresh).status_code == 201


def test_fiat_payout_needs_a_well_formed_code(sandbox):
    account_id, recipient_id = sandbox.funded_setup()
    sandbox.otp()
    body = {"recipient_id": recipient_id, "amount": "100.00"}
    assert sandbox.payout(account_id, body).json()["code"] == "OTP_REQUIRED"
    assert sandbox.payout(account_id, body, otp="12345").json()["code"] == "INVALID_OTP"
