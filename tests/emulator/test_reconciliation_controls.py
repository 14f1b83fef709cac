"""The control calls reconciliation is tested with: a payout made outside PayOps, a status moved
without an event, a balance adjusted, and the next events dropped (docs/emulator.md)."""

import pytest

from tests.emulator.test_domain_webhooks import deliveries, register

pytestmark = pytest.mark.django_db(transaction=True)


def outside(control, account_id, recipient_id, amount="100.00"):
    return control.post(
        "/_control/payouts",
        json={"virtual_account_id": account_id, "recipient_id": recipient_id, "amount": amount},
    )


def test_a_payout_made_outside_is_listed_priced_and_debited_like_any(sandbox, control):
    account_id, recipient_id = sandbox.funded_setup("1000.00")
    made = outside(control, account_id, recipient_id)
    assert made.status_code == 201, made.text
    payout = made.json()
    assert payout["status"] == "CREATED" and payout["from_amount"] == "100.00"
    debit = 100 + float(payout["fee"])
    assert float(sandbox.balance(account_id)) == pytest.approx(1000 - debit)
    listed = sandbox.get("/v1/payouts").json()
    assert [p["payout_id"] for p in listed["payouts"]] == [payout["payout_id"]]
    # Refused like a real one: more than the balance, an unknown account.
    assert outside(control, account_id, recipient_id, "5000.00").status_code == 422
    unknown = outside(control, "00000000-0000-0000-0000-000000000000", recipient_id)
    assert unknown.status_code == 404


def test_a_silent_status_change_moves_the_payout_and_its_money_without_an_event(
    sandbox, control, receiver, api_client
):
    account_id, recipient_id = sandbox.funded_setup("1000.00")
    register(sandbox, api_client, receiver.url)
    payout = outside(control, account_id, recipient_id).json()
    before = len(deliveries(control))
    moved = control.post(
        f"/_control/payouts/{payout['payout_id']}/status", json={"status": "FAILED"}
    )
    assert moved.status_code == 200, moved.text
    assert moved.json()["status"] == "FAILED"
    assert sandbox.balance(account_id) == "1000.00"  # the debit given back
    assert len(deliveries(control)) == before  # no event
    read = sandbox.get(f"/v1/payouts/{payout['payout_id']}").json()
    assert read["status"] == "FAILED" and read["events"][-1]["status"] == "FAILED"
    # The table still rules: nothing leaves FAILED.
    again = control.post(
        f"/_control/payouts/{payout['payout_id']}/status", json={"status": "COMPLETED"}
    )
    assert again.status_code == 409
    bad = control.post(f"/_control/payouts/{payout['payout_id']}/status", json={"status": "X"})
    assert bad.status_code == 400


def test_a_balance_adjustment_is_signed_and_never_overdraws(sandbox, control):
    account_id, _ = sandbox.funded_setup("100.00")
    path = f"/_control/virtual-accounts/{account_id}/balance-adjustments"
    taken = control.post(path, json={"amount": "-12.34"})
    assert taken.status_code == 200, taken.text
    assert sandbox.balance(account_id) == "87.66"
    assert control.post(path, json={"amount": "2.34"}).status_code == 200
    assert sandbox.balance(account_id) == "90.00"
    assert control.post(path, json={"amount": "-90.01"}).status_code == 400
    assert control.post(path, json={"amount": "0.001"}).status_code == 400
    assert sandbox.balance(account_id) == "90.00"


def test_dropped_events_are_stored_but_never_delivered(sandbox, control, receiver, api_client):
    account_id, _ = sandbox.funded_setup("0")
    register(sandbox, api_client, receiver.url)
    assert (
        control.post("/_control/faults", json={"drop_events_next": 1}).json()["drop_events_next"]
        == 1
    )
    sandbox.deposit(account_id, "10.00")  # this event is dropped
    sandbox.deposit(account_id, "20.00")  # this one is delivered
    assert control.get("/_control/faults").json()["drop_events_next"] == 0
    control.post("/_control/webhooks/flush")
    amounts = [r["body"] for r in receiver.requests]
    assert len(amounts) == 1 and b"20" in amounts[0]
