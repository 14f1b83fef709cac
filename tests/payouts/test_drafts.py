"""Payout drafts: the rules of a draft, who may change it, and what submission checks again."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal as D

import pytest
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from payouts.drafts.documents import document_add
from payouts.drafts.preview import reservations_expire_due
from payouts.drafts.services import (
    DraftValues,
    payout_draft_create,
    payout_draft_delete,
    payout_draft_update,
    payout_send_for_approval,
)
from payouts.errors import DuplicateNeedsConfirmation, PayoutInvalid
from payouts.models import ChangeSource, Payout, PayoutStatus, ReservationStatus
from quotes.models import Quote, QuoteStatus
from staff.models import AuditEntry, StaffUser
from tests.finance import (
    make_draft,
    make_environment,
    make_recipient,
    make_staff,
    make_virtual_account,
)

pytestmark = pytest.mark.django_db


def _previewed(payout: Payout, fees: str = "15.10") -> Payout:
    Payout.objects.filter(pk=payout.pk).update(
        previewed_at=timezone.now(),
        preview_total_fees=D(fees),
        preview_fees={"total_fees": fees},
        preview_recipient_amount=payout.amount,
        preview_recipient_currency="USD",
    )
    payout.refresh_from_db()
    return payout


def _quote(environment, maker, **fields) -> Quote:  # type: ignore[no-untyped-def]
    values = {
        "environment": environment,
        "upstream_id": f"q-{Quote.objects.count()}",
        "requested_by": maker,
        "base_currency": "USD",
        "quote_currency": "USD",
        "account_type": "WIRE",
        "requested_amount": D("100.00"),
        "base_amount": D("100.00"),
        "quote_amount": D("84.90"),
        "rate": D("1"),
        "service_rate": D("1"),
        "total_fees": D("15.10"),
        "status": QuoteStatus.ACTIVE,
        "expires_at": timezone.now() + timedelta(minutes=10),
    }
    values.update(fields)
    return Quote.objects.create(**values)


def test_a_maker_creates_a_draft_with_its_first_timeline_row_and_audit(maker: StaffUser) -> None:
    environment = make_environment()
    account = make_virtual_account(environment)
    recipient = make_recipient(environment, account.end_user, created_by=maker)
    payout = payout_draft_create(
        by=maker,
        environment=environment,
        values=DraftValues(
            virtual_account=account,
            recipient=recipient,
            amount=D("100.00"),
            memo="Invoice 7",
            internal_notes="ok",
        ),
    )
    assert payout.status == PayoutStatus.DRAFT and payout.mode == "fiat"
    assert payout.idempotency_key is not None
    [row] = payout.status_changes.all()
    assert (row.to_status, row.source, row.by) == ("draft", ChangeSource.STAFF, maker)
    assert AuditEntry.objects.get(action="payout.draft_created").actor == maker


@pytest.mark.parametrize("role", ["finance_approver", "compliance", "admin"])
def test_only_makers_create_drafts(role: str) -> None:
    environment = make_environment()
    account = make_virtual_account(environment)
    someone = make_staff(role)
    recipient = make_recipient(environment, account.end_user, created_by=someone)
    with pytest.raises(PermissionDenied):
        payout_draft_create(
            by=someone,
            environment=environment,
            values=DraftValues(virtual_account=account, recipient=recipient, amount=D("1")),
        )


@pytest.mark.parametrize(
    ("field", "values", "message"),
    [
        ("memo", {"memo": "m" * 256}, "At most 255"),
        ("internal_notes", {"internal_notes": "n" * 1001}, "At most 1000"),
        ("amount", {"amount": D("1000000.00")}, "999,999.99"),
        ("amount", {"amount": D("0")}, "greater than 0"),
        (
            "payment_currency",
            {"payment_currency": "USDC", "payment_network": "solana"},
            "fiat virtual account takes no payment instructions",
        ),
    ],
)
def test_draft_limits_are_enforced_on_their_field(
    maker: StaffUser, field: str, values: dict[str, object], message: str
) -> None:
    environment = make_environment()
    account = make_virtual_account(environment)
    recipient = make_recipient(environment, account.end_user, created_by=maker)
    draft = DraftValues(virtual_account=account, recipient=recipient, amount=D("10"))
    for key, value in values.items():
        setattr(draft, key, value)
    with pytest.raises(PayoutInvalid) as refused:
        payout_draft_create(by=maker, environment=environment, values=draft)
    assert message in " ".join(refused.value.by_field[field])
    assert not Payout.objects.exists()


def test_crypto_follows_the_account_and_asks_for_stablecoin_and_network(maker: StaffUser) -> None:
    environment = make_environment()
    account = make_virtual_account(environment, mode="crypto")
    recipient = make_recipient(environment, account.end_user, created_by=maker)
    draft = DraftValues(virtual_account=account, recipient=recipient, amount=D("10"))
    with pytest.raises(PayoutInvalid) as refused:
        payout_draft_create(by=maker, environment=environment, values=draft)
    assert "payment_currency" in refused.value.by_field
    draft.payment_currency, draft.payment_network = "USDT", "solana"
    with pytest.raises(PayoutInvalid) as refused:
        payout_draft_create(by=maker, environment=environment, values=draft)
    assert refused.value.by_field["payment_network"] == ["USDT networks: tron, polygon."]
    draft.payment_network = "tron"
    payout = payout_draft_create(by=maker, environment=environment, values=draft)
    assert payout.mode == "crypto"
    assert payout.payment_instructions == {"network": "tron", "currency": "USDT"}


def test_client_markup_only_without_a_quote_and_the_quote_sets_the_amount(
    maker: StaffUser,
) -> None:
    environment = make_environment()
    account = make_virtual_account(environment)
    recipient = make_recipient(environment, account.end_user, created_by=maker)
    quote = _quote(environment, maker)
    draft = DraftValues(
        virtual_account=account,
        recipient=recipient,
        quote=quote,
        client_markup={"fixed_fee": D("1"), "percentage_fee": None, "fx_markup": None},
    )
    with pytest.raises(PayoutInvalid) as refused:
        payout_draft_create(by=maker, environment=environment, values=draft)
    assert "client_markup" in refused.value.by_field
    draft.client_markup = None
    payout = payout_draft_create(by=maker, environment=environment, values=draft)
    assert payout.amount == D("100.00") and payout.quote == quote


def test_an_expired_or_mismatched_quote_is_refused(maker: StaffUser) -> None:
    environment = make_environment()
    account = make_virtual_account(environment)
    recipient = make_recipient(environment, account.end_user, created_by=maker)
    expired = _quote(environment, maker, expires_at=timezone.now() - timedelta(seconds=1))
    mxn = _quote(environment, maker, quote_currency="MXN", account_type="SPEI")
    for quote, text in ((expired, "expired"), (mxn, "MXN on SPEI")):
        with pytest.raises(PayoutInvalid) as refused:
            payout_draft_create(
                by=maker,
                environment=environment,
                values=DraftValues(virtual_account=account, recipient=recipient, quote=quote),
            )
        assert text in " ".join(refused.value.by_field["quote"])


def test_only_its_maker_edits_or_deletes_a_draft(draft_payout: Payout, maker: StaffUser) -> None:
    for role in ("finance_maker", "finance_approver", "compliance"):
        other = make_staff(role)
        with pytest.raises(PermissionDenied):
            payout_draft_update(by=other, payout=draft_payout, values=DraftValues(memo="changed"))
        with pytest.raises(PermissionDenied):
            payout_draft_delete(by=other, payout=draft_payout)
    updated = payout_draft_update(by=maker, payout=draft_payout, values=DraftValues(memo="changed"))
    assert updated.memo == "changed"
    entry = AuditEntry.objects.get(action="payout.draft_edited")
    assert entry.details["changes"]["memo"] == {"from": "", "to": "changed"}
    payout_draft_delete(by=maker, payout=draft_payout)
    assert not Payout.objects.filter(pk=draft_payout.pk).exists()
    assert AuditEntry.objects.filter(action="payout.draft_deleted").exists()


def test_a_priced_change_drops_the_stale_preview(draft_payout: Payout, maker: StaffUser) -> None:
    _previewed(draft_payout)
    payout_draft_update(by=maker, payout=draft_payout, values=DraftValues(reference="R-1"))
    draft_payout.refresh_from_db()
    assert draft_payout.previewed_at is not None  # a reference does not change the price
    payout_draft_update(by=maker, payout=draft_payout, values=DraftValues(amount=D("99.00")))
    draft_payout.refresh_from_db()
    assert draft_payout.previewed_at is None and draft_payout.preview_total_fees is None


def test_submit_says_exactly_what_is_missing(maker: StaffUser) -> None:
    environment = make_environment()
    account = make_virtual_account(environment, available_balance=D("100.00"))
    payout = make_draft(maker=maker, environment=environment, virtual_account=account)
    with pytest.raises(PayoutInvalid) as refused:
        payout_send_for_approval(by=maker, payout=payout)
    assert refused.value.by_field == {"preview": ["Preview the payout so its fees are known."]}
    _previewed(payout, fees="15.10")
    with pytest.raises(PayoutInvalid) as refused:
        payout_send_for_approval(by=maker, payout=payout)
    [message] = refused.value.by_field["virtual_account"]
    assert "needs 115.10 USD (amount 100.00 plus fees 15.10)" in message
    payout.refresh_from_db()
    assert payout.status == PayoutStatus.DRAFT


def test_submit_refuses_an_expired_reservation_and_an_inactive_account(maker: StaffUser) -> None:
    environment = make_environment()
    account = make_virtual_account(environment)
    payout = _previewed(make_draft(maker=maker, environment=environment, virtual_account=account))
    Payout.objects.filter(pk=payout.pk).update(
        preview_quote_id="r-1",
        preview_quote_status=ReservationStatus.ACTIVE,
        preview_quote_expires_at=timezone.now() - timedelta(seconds=1),
    )
    account.status = "frozen"
    account.save()
    with pytest.raises(PayoutInvalid) as refused:
        payout_send_for_approval(by=maker, payout=payout)
    assert "reserved preview quote has expired" in " ".join(refused.value.by_field["preview"])
    assert "frozen" in " ".join(refused.value.by_field["virtual_account"])


def test_a_crypto_payout_needs_a_document_to_be_submitted(
    maker: StaffUser,
    settings,
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    settings.MEDIA_ROOT = tmp_path
    environment = make_environment()
    account = make_virtual_account(environment, mode="crypto")
    payout = _previewed(
        make_draft(
            maker=maker,
            environment=environment,
            virtual_account=account,
            mode="crypto",
            payment_currency="USDC",
            payment_network="solana",
        )
    )
    with pytest.raises(PayoutInvalid) as refused:
        payout_send_for_approval(by=maker, payout=payout)
    assert refused.value.by_field == {
        "documents": ["A crypto payout needs at least one supporting document."]
    }
    document_add(by=maker, payout=payout, upload=SimpleUploadedFile("i.pdf", b"%PDF-1.4 invoice"))
    assert payout_send_for_approval(by=maker, payout=payout).status == PayoutStatus.PENDING_APPROVAL


def test_submission_moves_to_pending_approval_and_an_identical_one_asks_confirmation(
    maker: StaffUser,
) -> None:
    environment = make_environment()
    first = _previewed(make_draft(maker=maker, environment=environment))
    submitted = payout_send_for_approval(by=maker, payout=first)
    assert submitted.status == PayoutStatus.PENDING_APPROVAL and submitted.submitted_at
    assert [c.to_status for c in submitted.status_changes.all()] == ["pending_approval"]
    assert AuditEntry.objects.filter(action="payout.submitted").count() == 1
    second = _previewed(
        make_draft(
            maker=maker,
            environment=environment,
            virtual_account=first.virtual_account,
            recipient=first.recipient,
        )
    )
    with pytest.raises(DuplicateNeedsConfirmation) as refused:
        payout_send_for_approval(by=maker, payout=second)
    assert f"#{first.pk}" in refused.value.by_field[""][0]
    second.refresh_from_db()
    assert second.status == PayoutStatus.DRAFT
    assert payout_send_for_approval(by=maker, payout=second, confirm_duplicate=True).status == (
        PayoutStatus.PENDING_APPROVAL
    )
    # A submitted payout is no longer editable.
    with pytest.raises(PayoutInvalid):
        payout_draft_update(by=maker, payout=second, values=DraftValues(memo="late"))


def test_housekeeping_expires_reservations_and_quotes(maker: StaffUser) -> None:
    from quotes.services import quotes_expire_due

    environment = make_environment()
    payout = make_draft(maker=maker, environment=environment)
    Payout.objects.filter(pk=payout.pk).update(
        preview_quote_id="r",
        preview_quote_status=ReservationStatus.ACTIVE,
        preview_quote_expires_at=timezone.now() - timedelta(seconds=1),
    )
    stale = _quote(environment, maker, expires_at=timezone.now() - timedelta(seconds=1))
    fresh = _quote(environment, maker)
    assert reservations_expire_due() == 1 and reservations_expire_due() == 0
    assert quotes_expire_due() == 1 and quotes_expire_due() == 0
    payout.refresh_from_db()
    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert payout.preview_quote_status == ReservationStatus.EXPIRED
    assert (stale.status, fresh.status) == (QuoteStatus.EXPIRED, QuoteStatus.ACTIVE)


def test_the_expiry_schedules_are_declared() -> None:
    from console.schedules import SCHEDULES

    assert SCHEDULES["quotes.expire_due"].func == "quotes.tasks.expire_due_quotes"
    assert SCHEDULES["payouts.expire_reservations"].func == (
        "payouts.tasks.expire_due_reservations"
    )
