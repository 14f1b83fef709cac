"""Every event kind the API produces carries exactly the documented `data` fields, in order."""

import json

import pytest

from tests.emulator.test_domain_payouts import crypto_body, crypto_setup, walk

pytestmark = pytest.mark.django_db(transaction=True)

PAYOUT = ["event_id", "payout_id", "virtual_account_id", "status", "amount", "currency",
          "created_at"]  # fmt: skip
# interface.md 6.4 and decisions.md 4, field for field.
EXPECTED = {
    "user.created": ["event_id", "user_id", "type", "email", "phone", "status",
                     "verification_status", "verification_mode", "created_at",
                     "verification_triggered"],
    "user.updated": ["event_id", "user_id", "type", "email", "phone", "status",
                     "verification_status", "updated_at", "updated_fields",
                     "requires_reverification", "verification_triggered"],
    "user.verification.accepted": ["event_id", "user_id", "id", "verification_status",
                                   "kyc_type"],
    "user.verification.failed": ["event_id", "user_id", "id", "verification_status", "reasons"],
    "virtual_account.created": ["event_id", "virtual_account_id", "user_id", "status"],
    "virtual_account.activated": ["event_id", "virtual_account_id", "user_id", "status",
                                  "account_number", "routing_number"],
    "virtual_account.deposit_funds_received": ["event_id", "virtual_account_id", "deposit_id",
                                               "amount", "currency", "source", "created_at"],
    "payout.created": PAYOUT,
    "payout.completed": PAYOUT,
    "payout.deposit_received": PAYOUT,
    "payout.failed": [*PAYOUT, "reason"],
    "payout.returned": [*PAYOUT, "reason"],
    "payout.status_changed": ["event_id", "event_type", "created_at", "data"],
}  # fmt: skip


def test_every_event_has_exactly_the_documented_fields(sandbox, control):
    from emulator.models import WebhookEvent

    account_id, recipient_id = sandbox.funded_setup("5000.00")
    user_id = sandbox.get(f"/v1/virtual-accounts/{account_id}").json()["data"]["user_id"]
    assert sandbox.put(f"/v1/users/{user_id}", {"last_name": "Souza"}).status_code == 200
    sandbox.create_user("nope+reject@example.com")
    for amount in ("100.00", "100.03", "100.04"):
        body = {"recipient_id": recipient_id, "amount": amount}
        assert sandbox.payout(account_id, body, sandbox.otp()).status_code == 201
    crypto_account, crypto_recipient = crypto_setup(sandbox)
    crypto = sandbox.payout(crypto_account, crypto_body(crypto_recipient)).json()["data"]
    control.post(
        f"/_control/payouts/{crypto['id']}/deposit",
        json={"amount": crypto["deposit_instructions"]["amount"]},
    )
    walk(sandbox, crypto["id"], 5)
    seen: dict[str, list[str]] = {}
    for event in WebhookEvent.objects.order_by("created_at", "id"):
        envelope = json.loads(event.body)
        assert list(envelope) == ["event", "data"] and envelope["event"] == event.event
        assert envelope["data"]["event_id"].startswith("evt_")
        seen.setdefault(event.event, list(envelope["data"]))
        assert list(envelope["data"]) == seen[event.event], event.event
        if event.event == "payout.status_changed":
            inner = envelope["data"]["data"]
            assert list(inner) == ["payout_id", "status", "previous_status"]
            assert envelope["data"]["event_type"] == "payout.status_changed"
    assert seen == EXPECTED
