"""Crypto payouts against the emulator: deposit instructions with a QR code, tracked to the end."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from payouts.approval.services import payout_approve
from payouts.models import Payout, PayoutStatus
from payouts.tracking.polling.run import payouts_poll
from staff.models import StaffUser
from tests.identity import client_signed_in
from tests.payouts.live import World, build_world, crypto_payout

S = PayoutStatus


@pytest.fixture
def crypto_world(
    transactional_db: None,
    request: pytest.FixtureRequest,
    staff: dict[str, StaffUser],
    q_sync: None,
) -> World:
    emulator = request.getfixturevalue("live_emulator")
    environment = request.getfixturevalue("sandbox")
    return build_world(emulator, environment, recipient_creator=staff["maker"], mode="crypto")


def test_crypto_payout_shows_instructions_and_is_tracked_through_kyt_to_completed(
    crypto_world: World, staff: dict[str, StaffUser], settings: Any
) -> None:
    settings.PAYOUTS_POLL_AFTER_SECONDS = -1
    payout = crypto_payout(crypto_world, maker=staff["maker"], amount="250.00")
    payout_approve(payout=payout, by=staff["approver"])  # no OTP: sent at once
    payout.refresh_from_db()
    assert payout.status == S.CREATED
    instructions = payout.deposit_instructions
    assert instructions["wallet_address"] and instructions["network"] == "solana"
    # The document went as a base64 data URI, and its content is in no log.
    import base64
    import json

    from gateway.models import UpstreamCall
    from tests.payouts.live import PDF_BYTES

    (call,) = UpstreamCall.objects.filter(operation="payout_initiate")
    logged = json.dumps(call.request_body) + str(call.response_body)
    assert base64.b64encode(PDF_BYTES).decode() not in logged
    assert '"file_name": "invoice.pdf"' in str(call.request_body).replace("\\", "")

    client = client_signed_in(staff["approver"])
    html = client.get(f"/payouts/{payout.pk}/").content.decode()
    assert instructions["wallet_address"] in html and "<svg" in html
    assert 'data-testid="deposit-countdown"' in html and 'data-copy="#deposit-address"' in html
    assert 'data-testid="deposit-expired"' not in html

    crypto_world.emulator.control(
        "POST",
        f"payouts/{payout.upstream_id}/deposit",
        json={"amount": instructions["amount"]},
    )
    seen = []
    for _ in range(5):
        crypto_world.tick()
        payouts_poll()
        payout.refresh_from_db()
        seen.append(payout.status)
    assert payout.status == S.COMPLETED
    assert S.KYT_PENDING in payout.status_changes.values_list("to_status", flat=True) or (
        S.KYT_PENDING in seen
    )


def test_an_expired_deposit_address_is_shown_as_expired(
    crypto_world: World, staff: dict[str, StaffUser]
) -> None:
    payout = crypto_payout(crypto_world, maker=staff["maker"])
    payout_approve(payout=payout, by=staff["approver"])
    payout = Payout.objects.get(pk=payout.pk)
    past = (timezone.now() - timedelta(minutes=1)).isoformat()
    Payout.objects.filter(pk=payout.pk).update(
        deposit_instructions={**payout.deposit_instructions, "expires_at": past}
    )
    client = Client()
    client.force_login(staff["maker"])
    html = client.get(f"/payouts/{payout.pk}/").content.decode()
    assert 'data-testid="deposit-expired"' in html and "do not send funds" in html
