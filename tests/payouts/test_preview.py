"""Payout preview and reservation against the real emulator, through services and the API."""

from __future__ import annotations

from decimal import Decimal as D

import pytest
from django.test import Client

from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.drafts.preview import payout_preview
from payouts.drafts.services import payout_send_for_approval
from payouts.errors import PayoutInvalid
from payouts.models import Payout, PayoutStatus, ReservationStatus
from staff.models import AuditEntry, StaffUser
from tests.finance import make_draft, make_staff, upstream_directory
from tests.gateway.conftest import LiveEmulator, _fresh_shared_state, live_emulator, sandbox

__all__ = ["_fresh_shared_state", "live_emulator", "sandbox"]

pytestmark = pytest.mark.django_db(transaction=True)


def test_preview_shows_fees_on_top_and_what_the_recipient_gets(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    maker = make_staff("finance_maker")
    account, recipient = upstream_directory(sandbox, live_emulator, maker=maker)
    live_emulator.to_business_hours()  # the exact figures below carry no night-time markup
    payout = make_draft(
        maker=maker,
        environment=sandbox,
        virtual_account=account,
        recipient=recipient,
        amount="100.00",
    )
    previewed = payout_preview(by=maker, payout=payout)
    # decisions.md "Payout pricing": USD WIRE profile, fees on top: 15.00 + 0.1 % of 100.
    assert previewed.preview_total_fees == D("15.10")
    assert previewed.preview_recipient_currency == "USD"
    assert previewed.preview_recipient_amount == D("100.00")
    assert previewed.preview_quote_status == ReservationStatus.NONE
    assert AuditEntry.objects.filter(action="payout.previewed").count() == 1
    assert (
        payout_send_for_approval(by=maker, payout=previewed).status == PayoutStatus.PENDING_APPROVAL
    )


def test_reserving_keeps_a_quote_for_fifteen_minutes_by_the_upstream_clock(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    maker = make_staff("finance_maker")
    account, recipient = upstream_directory(sandbox, live_emulator, maker=maker)
    payout = make_draft(
        maker=maker,
        environment=sandbox,
        virtual_account=account,
        recipient=recipient,
        amount="250.00",
    )
    reserved = payout_preview(by=maker, payout=payout, reserve=True)
    assert reserved.preview_quote_id and reserved.preview_quote_status == ReservationStatus.ACTIVE
    assert reserved.preview_quote_expires_at is not None
    assert reserved.previewed_at is not None
    lifetime = reserved.preview_quote_expires_at - reserved.previewed_at
    # Expiry is the upstream's own, by its clock (moved 10 s ahead by upstream_directory).
    assert 15 * 60 + 10 - 5 < lifetime.total_seconds() <= 15 * 60 + 10 + 5


def test_the_upstream_refusal_of_a_preview_lands_on_the_field(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    maker = make_staff("finance_maker")
    account, recipient = upstream_directory(sandbox, live_emulator, maker=maker)
    Payout.objects.all().delete()
    recipient.upstream_id = "00000000-0000-4000-8000-000000000000"
    recipient.save()
    payout = make_draft(
        maker=maker, environment=sandbox, virtual_account=account, recipient=recipient
    )
    with pytest.raises(PayoutInvalid) as refused:
        payout_preview(by=maker, payout=payout)
    assert "recipient" in refused.value.by_field or "" in refused.value.by_field


def test_api_journey_draft_document_preview_submit(
    live_emulator: LiveEmulator,
    sandbox: Environment,
    settings,
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    settings.MEDIA_ROOT = tmp_path
    maker: StaffUser = make_staff("finance_maker")
    environment_switch(user=maker, environment=sandbox)
    account, recipient = upstream_directory(sandbox, live_emulator, maker=maker)
    client = Client()
    client.force_login(maker)
    created = client.post(
        "/api/v1/payouts",
        {
            "virtual_account_id": account.upstream_id,
            "recipient_id": recipient.upstream_id,
            "amount": "100.00",
            "memo": "Invoice 42",
        },
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    payout_id = created.json()["id"]
    assert created.json()["status"] == "draft"
    upload = client.post(
        f"/api/v1/payouts/{payout_id}/documents",
        {"file": _file("invoice.pdf", b"%PDF-1.4 hello"), "kind": "invoice"},
    )
    assert upload.status_code == 201, upload.content
    assert upload.json()["content_type"] == "application/pdf"
    bad = client.post(f"/api/v1/payouts/{payout_id}/documents", {"file": _file("x.pdf", b"<html>")})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "file"
    not_ready = client.post(
        f"/api/v1/payouts/{payout_id}/submit", {}, content_type="application/json"
    )
    assert not_ready.status_code == 400
    assert not_ready.json()["errors"] == [
        {"field": "preview", "message": "Preview the payout so its fees are known."}
    ]
    preview = client.post(
        f"/api/v1/payouts/{payout_id}/preview", {"reserve": True}, content_type="application/json"
    )
    assert preview.status_code == 200, preview.content
    assert preview.json()["preview"]["total_fees"] == "15.10"
    assert preview.json()["preview"]["reservation_status"] == "ACTIVE"
    submitted = client.post(
        f"/api/v1/payouts/{payout_id}/submit", {}, content_type="application/json"
    )
    assert submitted.status_code == 200, submitted.content
    body = submitted.json()
    assert body["status"] == "pending_approval"
    assert [row["to_status"] for row in body["timeline"]] == ["draft", "pending_approval"]
    again = client.patch(
        f"/api/v1/payouts/{payout_id}", {"memo": "late"}, content_type="application/json"
    )
    assert again.status_code == 409 and again.json()["code"] == "not_a_draft"


def _file(name: str, content: bytes):  # type: ignore[no-untyped-def]
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content)
