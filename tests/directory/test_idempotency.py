"""Our API's Idempotency-Key: bound to the caller, the environment and the request body, and
single-flight (one upstream creation per key, however many requests carry it at once)."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import httpx

from accounts.models import VirtualAccount
from gateway.models import Environment
from staff.api_tokens import api_token_create
from staff.models import StaffUser
from tests.directory.conftest import ApiClient, user_values
from tests.directory.test_api import API_WIRE, assert_error_shape, new_user
from users.models import EndUser


def keyed(client: ApiClient, path: str, body: dict[str, Any], key: str) -> Any:
    return client.client.post(
        f"/api/v1/{path}",
        body,
        content_type="application/json",
        headers={**client._headers(), "Idempotency-Key": key},
    )


def test_the_same_key_with_another_body_is_a_409_and_never_the_first_record(
    sandbox: Environment, api: dict[str, ApiClient], live_emulator: Any
) -> None:
    key = str(uuid.uuid4())
    first = keyed(api["compliance"], "end-users", user_values("ana@example.com"), key)
    assert first.status_code == 201, first.content
    other = keyed(api["compliance"], "end-users", user_values("bo@example.com"), key)

    body = assert_error_shape(other, 409, "idempotency_key_reused")
    assert [e["field"] for e in body["errors"]] == ["Idempotency-Key"]
    assert "bo@example.com" not in str(body) and str(first.json()["id"]) not in other.text
    assert EndUser.objects.count() == 1
    assert live_emulator.witness.count("/v1/users", "POST") == 1


def test_one_key_for_a_fiat_then_a_crypto_account_is_a_409(
    sandbox: Environment, api: dict[str, ApiClient], live_emulator: Any
) -> None:
    user = new_user(api)
    key = str(uuid.uuid4())
    fiat = keyed(
        api["finance_maker"], "virtual-accounts", {"end_user_id": user["id"], "mode": "fiat"}, key
    )
    assert fiat.status_code == 201, fiat.content
    crypto = keyed(
        api["finance_maker"], "virtual-accounts", {"end_user_id": user["id"], "mode": "crypto"}, key
    )

    assert_error_shape(crypto, 409, "idempotency_key_reused")
    assert list(VirtualAccount.objects.values_list("mode", flat=True)) == ["fiat"]
    assert live_emulator.witness.count("/v1/virtual-accounts", "POST") == 1
    again = keyed(
        api["finance_maker"], "virtual-accounts", {"end_user_id": user["id"], "mode": "fiat"}, key
    )
    assert again.status_code == 201 and again.json()["id"] == fiat.json()["id"]


def test_another_persons_key_never_returns_their_record(
    sandbox: Environment, api: dict[str, ApiClient], live_emulator: Any
) -> None:
    key = str(uuid.uuid4())
    user = new_user(api)
    account = {**API_WIRE["account"], "routing_number": "021000021"}
    body = {"end_user_id": user["id"], **API_WIRE, "account": account}
    mine = keyed(api["compliance"], "recipients", body, key)
    theirs = keyed(api["finance_maker"], "recipients", body, key)

    assert mine.status_code == 201, mine.content
    assert theirs.status_code == 201, theirs.content
    assert mine.json()["id"] != theirs.json()["id"]
    assert theirs.json()["created_by"] == "maker@payops.local"
    assert live_emulator.witness.count("/v1/recipients", "POST") == 2


def test_the_same_key_in_another_environment_is_another_submission(
    sandbox: Environment, api: dict[str, ApiClient], live_emulator: Any
) -> None:
    from tests.gateway.conftest import make_environment

    other = make_environment(live_emulator, name="Second sandbox")
    key = str(uuid.uuid4())
    here = keyed(api["compliance"], "end-users", user_values(), key)
    there = keyed(api["compliance"], f"end-users?environment={other.name}", user_values(), key)

    assert here.status_code == there.status_code == 201
    assert here.json()["environment"] != there.json()["environment"]
    assert EndUser.objects.count() == 2


def test_a_form_resubmitted_with_other_values_is_refused_on_the_page(
    sandbox: Environment, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    from tests.identity import client_signed_in

    client = client_signed_in(staff["compliance"])
    submission = str(uuid.uuid4())
    fields = {**user_values(), "request_key": submission}
    first = client.post("/end-users/new/", fields)
    assert first.status_code in (200, 302)
    changed = client.post("/end-users/new/", {**fields, "email": "other@example.com"})

    assert "already sent with other values" in changed.content.decode()
    assert list(EndUser.objects.values_list("email", flat=True)) == ["ana@example.com"]


def test_concurrent_requests_with_one_key_create_one_account_upstream(
    sandbox: Environment,
    staff: dict[str, StaffUser],
    api: dict[str, ApiClient],
    live_emulator: Any,
    live_server: Any,
) -> None:
    """Twenty requests with one key at once, over real HTTP to a threaded live server: exactly
    one reaches the upstream; the others answer its record or 409 in flight, never a twin."""
    user = new_user(api)
    token = api_token_create(user=staff["finance_maker"], name="burst").plaintext
    key = str(uuid.uuid4())
    # The upstream takes a while to answer, so the burst overlaps the first call.
    live_emulator.faults(latency_ms=800)
    start = threading.Barrier(20)
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def one() -> None:
        start.wait()
        response = httpx.post(
            f"{live_server.url}/api/v1/virtual-accounts",
            json={"end_user_id": user["id"], "mode": "fiat"},
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key},
            timeout=60,
        )
        with lock:
            answers.append(response)

    threads = [threading.Thread(target=one) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    live_emulator.faults(latency_ms=0)

    statuses = sorted({r.status_code for r in answers})
    assert set(statuses) <= {201, 409}, [r.text for r in answers if r.status_code not in (201, 409)]
    assert {r.json()["code"] for r in answers if r.status_code == 409} <= {
        "idempotency_key_in_flight"
    }
    assert len({r.json()["id"] for r in answers if r.status_code == 201}) == 1
    assert live_emulator.witness.count("/v1/virtual-accounts", "POST") == 1
    assert VirtualAccount.objects.count() == 1
    # After the burst the key answers the one account.
    after = httpx.post(
        f"{live_server.url}/api/v1/virtual-accounts",
        json={"end_user_id": user["id"], "mode": "fiat"},
        headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key},
        timeout=30,
    )
    assert after.status_code == 201
    assert after.json()["id"] == VirtualAccount.objects.get().pk
    assert live_emulator.witness.count("/v1/virtual-accounts", "POST") == 1


def test_a_claim_left_by_a_call_without_answer_is_taken_by_the_retry(
    sandbox: Environment, api: dict[str, ApiClient], live_emulator: Any
) -> None:
    """No answer ends the claim: the retry with the same key sends again (and is not 409)."""
    key = str(uuid.uuid4())
    live_emulator.faults(error_rate=1.0)
    failed = keyed(api["compliance"], "end-users", user_values(), key)
    assert failed.status_code == 503, failed.content
    live_emulator.faults(error_rate=0.0)
    assert EndUser.objects.get().claimed_until is None

    retried = keyed(api["compliance"], "end-users", user_values(), key)
    assert retried.status_code == 201, retried.content
    assert EndUser.objects.get().is_synced
