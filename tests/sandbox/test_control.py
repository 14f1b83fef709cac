"""sandbox.control drives a real emulator's control calls over HTTP, with typed answers."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from sandbox.control import EmulatorControl, EmulatorControlError, emulator_control
from tests.servers import serve_in_thread

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def control(settings: Any) -> Iterator[EmulatorControl]:
    from emulator.asgi import application

    with serve_in_thread(application, lifespan="off") as url:
        settings.EMULATOR_URL = url
        with emulator_control() as client:
            yield client


def _token(control: EmulatorControl, client_id: str, password: str, api_key: str) -> str:
    response = httpx.post(
        f"{control.base_url}/sandbox/auth",
        json={"client_id": client_id, "password": password},
        headers={"x-api-key": api_key},
    )
    assert response.status_code == 200, response.text
    return str(response.json()["data"]["access_token"])


def test_a_client_issued_by_control_opens_the_api(control: EmulatorControl) -> None:
    issued = control.create_client("sandbox tests", rate_per_second=50)
    assert _token(control, issued.client_id, issued.password, issued.api_key)


def test_clock_and_faults_round_trip(control: EmulatorControl) -> None:
    before = control.clock()
    after = control.advance_clock(120)
    assert after.offset_seconds == pytest.approx(before.offset_seconds + 120)
    assert control.set_faults(latency_ms=5, error_rate=0.5)["error_rate"] == 0.5
    assert control.faults()["latency_ms"] == 5
    assert control.clear_faults()["error_rate"] == 0


def test_the_domain_calls_answer_with_their_documented_shapes(control: EmulatorControl) -> None:
    assert control.mailbox("nobody@example.com") == []
    assert isinstance(control.tick(), dict)
    assert control.flush_webhooks() == 0
    assert control.deliveries() == []
    issued = control.create_client("events")
    queued = control.emit_event(
        client_id=issued.client_id, event="card_payment", data={"amount": "1.00"}
    )
    assert queued["event_id"] and queued["queued"] is False  # no webhook registered


def test_a_refused_call_raises_with_the_emulators_status_and_body(
    control: EmulatorControl,
) -> None:
    with pytest.raises(EmulatorControlError) as refused:
        control.deposit(virtual_account_id="not-a-uuid", amount=Decimal("10.00"))
    assert refused.value.status in (400, 404)
    assert isinstance(refused.value.body, dict)
    with pytest.raises(EmulatorControlError) as unknown:
        control.decide_user(user_id="00000000-0000-0000-0000-000000000000", accept=True)
    assert unknown.value.status == 404


def test_a_wrong_token_is_refused(control: EmulatorControl) -> None:
    with (
        EmulatorControl(control.base_url, "wrong") as stranger,
        pytest.raises(EmulatorControlError) as refused,
    ):
        stranger.tick()
    assert refused.value.status == 401


def test_an_emulator_that_does_not_answer_is_a_control_error() -> None:
    with (
        EmulatorControl("http://127.0.0.1:9", "t") as nowhere,
        pytest.raises(EmulatorControlError, match="did not answer"),
    ):
        nowhere.clock()
