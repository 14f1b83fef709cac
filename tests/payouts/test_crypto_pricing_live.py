"""Crypto payouts priced as charged, against the emulator over HTTP: the preview includes the
network fee, a reserved preview quote pays the payout to the end, and a price that changed
between preview and initiation is flagged on the payout, in the audit trail and to its people."""

from __future__ import annotations

import json
from decimal import Decimal as D
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from gateway.models import UpstreamCall
from gateway.services.environments import environment_switch
from payouts.approval.services import payout_approve, payout_requote
from payouts.drafts.documents import document_add
from payouts.drafts.preview import payout_preview
from payouts.drafts.services import DraftValues, payout_draft_create, payout_send_for_approval
from payouts.models import NotificationKind, Payout, PayoutNotification, PayoutStatus
from payouts.tracking.polling.run import payouts_poll
from staff.models import AuditEntry, StaffUser
from tests.emulator.conftest import business_hours_seconds
from tests.identity import client_signed_in
from tests.payouts.live import PDF_BYTES, World, build_world

S = PayoutStatus
# decisions.md 2 on the USD WIRE rail: 15.00 + 0.1 % of 539.00 = 15.54, plus USDC on polygon 0.20.
AMOUNT, FEES, DEPOSIT = D("539.00"), D("15.74"), D("554.74")


@pytest.fixture
def crypto_world(
    transactional_db: None,
    request: pytest.FixtureRequest,
    staff: dict[str, StaffUser],
    q_sync: None,
) -> World:
    emulator = request.getfixturevalue("live_emulator")
    environment = request.getfixturevalue("sandbox")
    world = build_world(emulator, environment, recipient_creator=staff["maker"], mode="crypto")
    for person in staff.values():
        environment_switch(user=person, environment=environment)
    return world


def new_york(world: World, *, hour: int, minute: int = 0) -> None:
    """The emulator's clock to the next weekday at hour:minute in New York."""
    now = world.emulator.control("GET", "clock")["now"]
    noon = business_hours_seconds(now)
    world.emulator.advance(noon + (hour - 12) * 3600 + minute * 60)


def crypto_draft(world: World, maker: StaffUser) -> Payout:
    payout = payout_draft_create(
        by=maker,
        environment=world.environment,
        values=DraftValues(
            virtual_account=world.account,
            recipient=world.recipient,
            amount=AMOUNT,
            reference="INV-539",
            payment_currency="USDC",
            payment_network="polygon",
        ),
    )
    upload = SimpleUploadedFile("invoice.pdf", PDF_BYTES, content_type="application/pdf")
    document_add(by=maker, payout=payout, upload=upload)
    return payout


def page(person: StaffUser, path: str) -> str:
    client = client_signed_in(person)
    response = client.get(path)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def api(person: StaffUser, payout: Payout) -> dict[str, Any]:
    client = client_signed_in(person)
    response = client.get(f"/api/v1/payouts/{payout.pk}")
    assert response.status_code == 200, response.content
    return dict(response.json())


def test_crypto_preview_includes_the_network_fee_and_is_what_is_charged(
    crypto_world: World, staff: dict[str, StaffUser]
) -> None:
    new_york(crypto_world, hour=12)
    maker = staff["maker"]
    previewed = payout_preview(by=maker, payout=crypto_draft(crypto_world, maker))
    assert previewed.preview_total_fees == FEES
    assert D(previewed.preview_fees["network_fee"]) == D("0.20")
    assert (previewed.preview_total, previewed.total_currency) == (DEPOSIT, "USDC")
    # (The clock's jump to noon can outlive the gateway's token: a 401 and a retry, then a 200.)
    (call,) = UpstreamCall.objects.filter(operation="payout_preview", status=200)
    assert json.loads(call.request_body)["payment_instructions"] == {
        "network": "polygon",
        "currency": "USDC",
    }
    html = page(staff["approver"], f"/payouts/{previewed.pk}/")
    assert "Network fee" in html and "15.74 USD" in html
    assert "Deposit to send" in html and "554.74 USDC" in html

    payout_send_for_approval(by=maker, payout=previewed)
    payout_approve(payout=previewed, by=staff["approver"])  # crypto: sent at once
    payout = Payout.objects.get(pk=previewed.pk)
    assert payout.status == S.CREATED
    assert (payout.charged_total_fees, payout.charged_total) == (FEES, DEPOSIT)
    assert payout.charged_total_currency == "USDC" and not payout.charge_differs
    assert 'data-testid="charge-as-shown"' in page(staff["approver"], f"/payouts/{payout.pk}/")


def test_a_crypto_payout_with_a_reserved_preview_quote_completes_and_the_api_shows_it(
    crypto_world: World, staff: dict[str, StaffUser], settings: Any
) -> None:
    settings.PAYOUTS_POLL_AFTER_SECONDS = -1
    new_york(crypto_world, hour=12)
    maker = staff["maker"]
    reserved = payout_preview(by=maker, payout=crypto_draft(crypto_world, maker), reserve=True)
    assert reserved.preview_quote_id and reserved.preview_total_fees == FEES
    payout_send_for_approval(by=maker, payout=reserved)
    payout_approve(payout=reserved, by=staff["approver"])
    payout = Payout.objects.get(pk=reserved.pk)
    assert payout.status == S.CREATED, (payout.initiation_error, payout.failure_reason)
    (made,) = crypto_world.payouts_upstream()
    assert made["quote_id"] == reserved.preview_quote_id
    assert not payout.charge_differs and payout.charged_total == DEPOSIT

    body = api(staff["approver"], payout)
    assert body["charged"]["total_fees"] == "15.74"
    assert body["charged"]["fees"]["network_fee"] == "0.20"
    assert (body["charged"]["total"], body["charged"]["total_currency"]) == ("554.74", "USDC")
    assert body["charge_differs"] is False and body["charge_differences"] == []
    deposit = body["deposit_instructions"]
    assert deposit["amount"] == "554.74" and deposit["currency"] == "USDC"
    assert deposit["network"] == "polygon" and deposit["wallet_address"].startswith("0x")
    assert deposit["expires_at"] and body["preview"]["total"] == "554.74"

    crypto_world.emulator.control(
        "POST", f"payouts/{payout.upstream_id}/deposit", json={"amount": deposit["amount"]}
    )
    for _ in range(5):
        crypto_world.tick()
        payouts_poll()
    payout.refresh_from_db()
    assert payout.status == S.COMPLETED


def test_a_price_changed_between_preview_and_initiation_is_flagged_not_accepted(
    crypto_world: World, staff: dict[str, StaffUser]
) -> None:
    new_york(crypto_world, hour=17, minute=55)  # business hours: no penalty markup
    maker, approver = staff["maker"], staff["approver"]
    previewed = payout_preview(by=maker, payout=crypto_draft(crypto_world, maker))
    assert previewed.preview_recipient_amount == AMOUNT
    payout_send_for_approval(by=maker, payout=previewed)
    crypto_world.emulator.advance(10 * 60)  # 18:05: the off-hours penalty lowers the rate
    payout_approve(payout=previewed, by=approver)  # priced at execution, without a quote

    payout = Payout.objects.get(pk=previewed.pk)
    assert payout.status == S.CREATED  # the upstream made it: flagged, not hidden or undone
    assert payout.charge_differs
    assert payout.charged_recipient_amount == D("537.92")  # 539.00 x (1 - 0.002)
    assert [d["figure"] for d in payout.charge_differences] == ["recipient_amount"]
    audit = AuditEntry.objects.get(action="payout.charge_differs", target_id=str(payout.pk))
    assert audit.details["differences"][0]["charged"] == "537.92"
    told = PayoutNotification.objects.filter(payout=payout, kind=NotificationKind.CHARGE_DIFFERS)
    assert set(told.values_list("recipient__email", flat=True)) == {maker.email, approver.email}

    html = page(approver, f"/payouts/{payout.pk}/")
    assert 'data-testid="charge-differs"' in html
    assert "shown 539.00 USD, charged 537.92 USD" in html
    assert "was charged otherwise than shown" in page(maker, "/")
    body = api(maker, payout)
    assert body["charge_differs"] is True
    (difference,) = body["charge_differences"]
    assert difference["figure"] == "recipient_amount"
    assert (difference["shown"], difference["charged"]) == ("539.00", "537.92")


def test_an_expired_crypto_reservation_is_requoted_and_sent_without_a_new_approval(
    crypto_world: World, staff: dict[str, StaffUser]
) -> None:
    new_york(crypto_world, hour=12)
    maker = staff["maker"]
    reserved = payout_preview(by=maker, payout=crypto_draft(crypto_world, maker), reserve=True)
    payout_send_for_approval(by=maker, payout=reserved)
    crypto_world.emulator.advance(16 * 60)  # the reservation lived 15 minutes
    payout_approve(payout=reserved, by=staff["approver"])
    payout = Payout.objects.get(pk=reserved.pk)
    assert payout.status == S.APPROVED and payout.initiation_error  # refused, correctable
    payout_requote(payout=payout, by=maker)  # same figures: approvals kept, sent at once
    payout = Payout.objects.get(pk=payout.pk)
    assert payout.status == S.CREATED and crypto_world.payouts_upstream()
    assert payout.upstream_id and not payout.charge_differs


def test_a_reservation_that_does_not_fit_waits_for_a_requote_instead_of_failing(
    crypto_world: World, staff: dict[str, StaffUser]
) -> None:
    new_york(crypto_world, hour=12)
    maker, approver = staff["maker"], staff["approver"]
    reserved = payout_preview(by=maker, payout=crypto_draft(crypto_world, maker), reserve=True)
    payout_send_for_approval(by=maker, payout=reserved)
    # A reservation made for another body than the one sent (as before previews carried the
    # payment instructions): here the network changed behind it, so its fee no longer fits.
    Payout.objects.filter(pk=reserved.pk).update(payment_network="solana")
    payout_approve(payout=reserved, by=approver)
    payout = Payout.objects.get(pk=reserved.pk)
    assert payout.status == S.APPROVED, payout.failure_reason
    assert "does not fit" in payout.initiation_error and not crypto_world.payouts_upstream()
    payout = payout_requote(payout=payout, by=maker)  # solana's fee is 0.50: beyond tolerance
    assert payout.status == S.PENDING_APPROVAL and payout.preview_total_fees == D("16.04")
    payout_approve(payout=payout, by=approver)
    payout = Payout.objects.get(pk=payout.pk)
    assert payout.status == S.CREATED and not payout.charge_differs
    assert (payout.charged_total, payout.charged_total_currency) == (D("555.04"), "USDC")


def test_the_api_schema_documents_the_charged_figures_and_deposit_instructions(
    staff: dict[str, StaffUser],
) -> None:
    client = client_signed_in(staff["approver"])
    schemas = client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    payout = schemas["PayoutOut"]["properties"]
    for name in ("charged", "charge_differs", "charge_differences", "deposit_instructions"):
        assert payout[name].get("description"), name
    deposit = schemas["DepositInstructionsOut"]["properties"]
    assert set(deposit) == {"wallet_address", "network", "currency", "amount", "expires_at"}
    assert all(field.get("description") for field in deposit.values())
    charged = schemas["ChargedOut"]["properties"]
    assert {"fees", "total_fees", "total", "total_currency", "recipient_amount"} <= set(charged)
    assert "network_fee" in schemas["FeesOut"]["properties"]
    assert "total" in schemas["PreviewOut"]["properties"]
