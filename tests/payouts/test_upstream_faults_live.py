"""One upstream fault does not reach the person; a lasting one is said in words; waits show."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from django.test import Client

from payouts.drafts.preview import payout_preview
from payouts.models import Payout, PayoutStatus, UpstreamWait
from payouts.release.code import payout_otp_confirm, payout_otp_send
from staff.models import StaffUser
from tests.finance import make_draft
from tests.identity import client_signed_in
from tests.payouts.live import World
from tests.payouts.test_initiation_live import approved

S = PayoutStatus


def client_for(user: StaffUser) -> Client:
    return client_signed_in(user)


def api_post(user: StaffUser, path: str) -> Any:
    return client_for(user).post(
        f"/api/v1{path}", data=json.dumps({}), content_type="application/json"
    )


def draft(world: World, staff: dict[str, StaffUser]) -> Payout:
    return make_draft(
        maker=staff["maker"],
        environment=world.environment,
        virtual_account=world.account,
        recipient=world.recipient,
        amount="100.00",
    )


def statuses(world: World, path_suffix: str) -> list[int | None]:
    return [
        r["status"]
        for r in world.emulator.witness.api_requests()
        if r["path"].endswith(path_suffix)
    ]


def clear_faults_once(world: World, status: int | None, path_suffix: str) -> threading.Thread:
    """Clear the faults as soon as one request to `path_suffix` was answered with `status`."""

    def clear() -> None:
        deadline = time.monotonic() + 30
        while status not in statuses(world, path_suffix) and time.monotonic() < deadline:
            time.sleep(0.005)
        world.emulator.control("DELETE", "faults")

    thread = threading.Thread(target=clear)
    thread.start()
    return thread


def test_a_preview_succeeds_after_one_upstream_500(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = draft(world, staff)
    payout_preview(by=staff["maker"], payout=payout)  # token and connection first
    world.emulator.witness.clear()
    world.emulator.faults(error_rate=1.0)
    clearer = clear_faults_once(world, 500, "/payout/preview")
    previewed = payout_preview(by=staff["maker"], payout=payout)
    clearer.join()
    assert previewed.preview_total_fees is not None
    answers = statuses(world, "/payout/preview")
    assert answers[0] == 500 and answers[-1] == 200


@pytest.mark.parametrize("reserve", [False, True])
def test_a_preview_succeeds_after_a_dropped_answer(
    world: World, staff: dict[str, StaffUser], reserve: bool
) -> None:
    payout = draft(world, staff)
    world.emulator.faults(drop_response_next=1)
    previewed = payout_preview(by=staff["maker"], payout=payout, reserve=reserve)
    assert previewed.preview_total_fees is not None
    assert bool(previewed.preview_quote_id) is reserve
    assert statuses(world, "/payout/preview") == [None, 200]


def test_otp_send_after_one_upstream_500_succeeds_over_the_api(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = approved(world, staff)
    world.emulator.faults(error_rate=1.0)
    clearer = clear_faults_once(world, 500, "/verification/send")
    response = api_post(
        staff["approver"],
        f"/payouts/{payout.pk}/otp/send?environment={world.environment.name}",
    )
    clearer.join()
    assert response.status_code == 200, response.content
    assert response.json()["sent_to"] == world.environment.verification_email
    assert statuses(world, "/verification/send")[0] == 500


def test_a_lasting_preview_failure_is_a_503_in_the_api_and_words_on_the_page(
    world: World, staff: dict[str, StaffUser], settings: Any
) -> None:
    settings.GATEWAY_MAX_ATTEMPTS = 2
    payout = draft(world, staff)
    world.emulator.faults(error_rate=1.0)
    api = api_post(
        staff["maker"], f"/payouts/{payout.pk}/preview?environment={world.environment.name}"
    )
    assert api.status_code == 503, api.content
    body = api.json()
    assert body["code"] == "upstream_unavailable"
    assert "failed twice (last: HTTP 500)" in body["message"]
    assert "nothing was saved or charged" in body["message"]
    assert "Try again in a minute" in body["message"]
    assert body["errors"] == []

    page = client_for(staff["maker"]).post(f"/payouts/{payout.pk}/preview/", HTTP_HX_REQUEST="true")
    assert page.status_code == 200
    assert "The upstream failed twice (last: HTTP 500)" in page.content.decode()
    assert Payout.objects.get(pk=payout.pk).previewed_at is None


def test_a_lasting_otp_send_failure_is_a_503_in_the_api_and_words_on_the_page(
    world: World, staff: dict[str, StaffUser], settings: Any
) -> None:
    settings.GATEWAY_MAX_ATTEMPTS = 2
    payout = approved(world, staff)
    world.emulator.faults(drop_response_next=10)
    api = api_post(
        staff["approver"], f"/payouts/{payout.pk}/otp/send?environment={world.environment.name}"
    )
    assert api.status_code == 503, api.content
    assert api.json()["code"] == "upstream_unavailable"
    assert "did not answer twice" in api.json()["message"]
    assert "only the newest code counts" in api.json()["message"]

    page = client_for(staff["approver"]).post(
        f"/payouts/{payout.pk}/otp/send/", HTTP_HX_REQUEST="true"
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="otp-error"' in html and "Send it again in a minute" in html


def test_the_payout_page_shows_the_wait_for_the_rate_limit_while_it_lasts(
    world: World, staff: dict[str, StaffUser], settings: Any
) -> None:
    settings.GATEWAY_MAX_ATTEMPTS = 30  # the faults end before the attempts do
    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    code = world.otp_code()
    seen: list[str] = []

    def watch() -> None:
        """The approver's page, re-fetched as the live update would, until the wait shows."""
        viewer = client_for(staff["approver"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            html = viewer.get(f"/payouts/{payout.pk}/live/").content.decode()
            if "attempt 2" in html:
                seen.append(html)
                break
            time.sleep(0.05)
        world.emulator.control("DELETE", "faults")

    world.emulator.faults(rate_429=1.0)
    watcher = threading.Thread(target=watch)
    watcher.start()
    released = payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    watcher.join()

    assert seen, "the wait never showed on the payout page"
    assert "Waiting for the upstream&#x27;s rate limit: attempt 2, next try at" in seen[0]
    assert 'data-testid="upstream-wait"' in seen[0] and 'data-testid="timeline"' in seen[0]
    # Once the upstream answered, the wait is gone and the payout moved on.
    assert released.status == S.CREATED
    assert released.upstream_wait == UpstreamWait.NONE
    after = client_for(staff["approver"]).get(f"/payouts/{payout.pk}/live/").content.decode()
    assert "Waiting for" not in after


def test_when_the_retries_run_out_the_payout_and_the_api_say_what_comes_next(
    world: World, staff: dict[str, StaffUser], settings: Any
) -> None:
    settings.GATEWAY_MAX_ATTEMPTS = 2
    payout = approved(world, staff)
    payout_otp_send(payout=payout, by=staff["approver"])
    code = world.otp_code()
    world.emulator.faults(rate_429=1.0)
    waiting = payout_otp_confirm(payout=payout, by=staff["approver"], code=code)
    world.emulator.control("DELETE", "faults")

    assert waiting.status == S.SUBMITTING
    assert waiting.upstream_wait == UpstreamWait.RATE_LIMIT and waiting.upstream_wait_attempt == 0
    assert "rate limit refused the call twice" in waiting.initiation_error
    assert "same key" in waiting.initiation_error
    got = client_for(staff["approver"]).get(
        f"/api/v1/payouts/{payout.pk}?environment={world.environment.name}"
    )
    wait = got.json()["upstream_wait"]
    assert wait["reason"] == "rate_limit" and wait["attempt"] == 0 and wait["next_try_at"]
    page = client_for(staff["approver"]).get(f"/payouts/{payout.pk}/live/").content.decode()
    assert "the next try (same key) comes by about" in page
