"""Emulated users: creation with sandbox verification, updates, decisions and idempotency."""

import uuid

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def events_of(user_id: str) -> list[tuple[str, dict]]:
    from emulator.models import WebhookEvent

    return [
        (event.event, event.data)
        for event in WebhookEvent.objects.order_by("created_at", "id")
        if event.data.get("user_id") == user_id
    ]


def test_sandbox_user_is_verified_at_once_with_both_events(sandbox):
    user = sandbox.create_user()
    assert user["status"] == "verified"
    assert user["verification_status"] == "verified"
    events = events_of(user["user_id"])
    assert [name for name, _ in events] == ["user.created", "user.verification.accepted"]
    created = events[0][1]
    assert created["status"] == "unverified"
    assert created["verification_status"] == "not_started"
    assert created["verification_triggered"] is True
    assert created["event_id"].startswith("evt_")
    accepted = events[1][1]
    assert accepted["id"].startswith("ver_") and accepted["kyc_type"] == "full"


def test_plus_reject_email_is_rejected_with_reason(sandbox):
    user = sandbox.create_user("ana+reject@example.com")
    assert user["verification_status"] == "rejected"
    assert user["status"] == "unverified"
    name, data = events_of(user["user_id"])[-1]
    assert name == "user.verification.failed"
    assert data["reasons"] == ["document_unreadable"]


def test_plus_review_waits_for_a_control_decision(sandbox, control):
    user = sandbox.create_user("ana+review@example.com")
    assert user["verification_status"] == "not_started"
    decided = control.post(f"/_control/users/{user['user_id']}/decision", json={"accept": True})
    assert decided.status_code == 200, decided.text
    assert decided.json()["data"]["verification_status"] == "verified"
    again = control.post(f"/_control/users/{user['user_id']}/decision", json={"accept": False})
    assert again.status_code == 409
    assert again.json()["code"] == "USER_NOT_PENDING"


def test_review_rejection_carries_given_reasons(sandbox, control):
    user = sandbox.create_user("bo+review@example.com")
    decided = control.post(
        f"/_control/users/{user['user_id']}/decision",
        json={"accept": False, "reasons": ["sanctions_hit"]},
    )
    assert decided.json()["data"]["verification_status"] == "rejected"
    assert events_of(user["user_id"])[-1][1]["reasons"] == ["sanctions_hit"]


def test_production_user_waits_for_a_decision(production):
    user = production.create_user()
    assert user["verification_status"] == "not_started"
    assert [name for name, _ in events_of(user["user_id"])] == ["user.created"]


def test_create_validation_errors_list_each_field(sandbox):
    response = sandbox.post(
        "/v1/users",
        {"type": "robot", "email": "nope", "country": "USA"},
        **{"idempotency-key": str(uuid.uuid4())},
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error"
    fields = {item["field"] for item in body["errors"]}
    assert {"type", "email", "country", "first_name", "last_name"} <= fields


def test_create_requires_idempotency_key(sandbox):
    response = sandbox.post("/v1/users", {"type": "individual", "email": "a@example.com"})
    assert response.status_code == 400
    assert response.json()["code"] == "IDEMPOTENCY_KEY_REQUIRED"


def test_create_replays_same_key_and_refuses_other_body(sandbox):
    from emulator.models import EmulatedUser

    body = {
        "type": "individual",
        "email": "k@example.com",
        "first_name": "K",
        "last_name": "L",
        "country": "US",
    }
    key = str(uuid.uuid4())
    first = sandbox.post("/v1/users", body, **{"idempotency-key": key})
    second = sandbox.post("/v1/users", body, **{"Idempotency-Key": key})
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert EmulatedUser.objects.count() == 1
    other = sandbox.post("/v1/users", {**body, "first_name": "X"}, **{"idempotency-key": key})
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"


def test_update_changes_only_sent_fields(sandbox):
    user = sandbox.create_user()
    response = sandbox.put(f"/v1/users/{user['user_id']}", {"phone_number": "+15555550199"})
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["phone"] == "+15555550199"
    assert data["first_name"] == "Ana"
    assert data["verification_status"] == "verified"
    name, event = events_of(user["user_id"])[-1]
    assert name == "user.updated"
    assert event["updated_fields"] == {"phone_number": "+15555550199"}
    assert event["requires_reverification"] is False


def test_identity_change_restarts_verification(sandbox):
    user = sandbox.create_user("cy+review@example.com")
    sandbox.control.post(f"/_control/users/{user['user_id']}/decision", json={"accept": True})
    response = sandbox.put(f"/v1/users/{user['user_id']}", {"last_name": "Souza"})
    data = response.json()["data"]
    assert data["requires_reverification"] is True
    assert data["verification_status"] == "not_started"
    assert data["status"] == "unverified"
    updated = events_of(user["user_id"])[-1][1]
    assert updated["requires_reverification"] is True
    assert updated["verification_triggered"] is True


def test_identity_change_in_sandbox_is_reverified_at_once(sandbox):
    user = sandbox.create_user()
    data = sandbox.put(f"/v1/users/{user['user_id']}", {"first_name": "Ann"}).json()["data"]
    assert data["verification_status"] == "verified"
    assert [name for name, _ in events_of(user["user_id"])][-2:] == [
        "user.updated",
        "user.verification.accepted",
    ]


def test_update_refuses_type(sandbox):
    user = sandbox.create_user()
    response = sandbox.put(f"/v1/users/{user['user_id']}", {"type": "individual"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "type"


def test_get_user_and_unknown_user(sandbox):
    user = sandbox.create_user()
    assert sandbox.get(f"/v1/users/{user['user_id']}").json()["data"]["email"] == user["email"]
    missing = sandbox.get(f"/v1/users/{uuid.uuid4()}")
    assert missing.status_code == 404
    assert missing.json()["code"] == "USER_NOT_FOUND"


def test_sandbox_user_is_invisible_in_production(sandbox, production):
    user = sandbox.create_user()
    assert production.get(f"/v1/users/{user['user_id']}").status_code == 404
