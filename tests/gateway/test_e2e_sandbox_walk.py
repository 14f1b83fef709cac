"""A full sandbox walk through the gateway's typed API against the emulator over real HTTP."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from django import forms

from gateway.client import Upstream, call_sync, upstream
from gateway.errors import NotFoundError, ValidationError
from gateway.models import Environment, UpstreamCall
from gateway.schemas import (
    Balance,
    Message,
    OtpSent,
    Payout,
    PayoutCreated,
    PayoutPage,
    PayoutPreview,
    PayoutStatus,
    Quote,
    QuoteStatus,
    Recipient,
    RecipientPage,
    User,
    VirtualAccount,
)
from tests.gateway.conftest import LiveEmulator
from tests.gateway.test_e2e_surface import OPERATIONS, logged_operations_match
from users.models import EndUser


class RecipientForm(forms.Form):
    """A form of the kind a recipient page would show, to receive the upstream's field errors."""

    first_name = forms.CharField()
    email = forms.CharField()
    account_number = forms.CharField()
    routing_number = forms.CharField(required=False)


PDF = "data:application/pdf;base64,JVBERi0xLjQKJSVFT0YK"
ADDRESS = {
    "street_name": "1 Main St",
    "city": "Austin",
    "state": "TX",
    "postal_code": "73301",
    "country": "US",
}


def _aware(value: datetime | None) -> None:
    assert value is not None and value.tzinfo is not None and value.utcoffset() is not None


def _documented(model: Any, *names: str) -> None:
    """The emulator sent every field decisions.md documents for this response (none defaulted)."""
    missing = set(names) - model.model_fields_set
    assert not missing, f"{type(model).__name__} lacks {sorted(missing)}"


def _user(client: Upstream, environment: Environment, email: str) -> User:
    # The business row carries the key, committed with it before the call (found again on retry).
    end_user, _ = EndUser.objects.get_or_create(environment=environment, email=email)
    return call_sync(
        client.users.create,
        idempotency_key=str(end_user.idempotency_key),
        email=email,
        phone_number="+15125550100",
        first_name="Ada",
        last_name="Lovelace",
        country="US",
    )


def _active_account(
    client: Upstream, emulator: LiveEmulator, user_id: str, mode: str
) -> VirtualAccount:
    account = call_sync(client.virtual_accounts.create, user_id=user_id, mode=mode)
    assert isinstance(account, VirtualAccount)
    assert account.status == "activating" and account.account_number is None
    _documented(account, *VirtualAccount.model_fields)
    emulator.advance(10)
    emulator.control("POST", "tick")
    active = call_sync(client.virtual_accounts.get, account.id)
    assert active.status == "active" and active.account_number and active.routing_number
    return active


def _wire_recipient(client: Upstream, user_id: str) -> Recipient:
    return call_sync(
        client.recipients.create,
        user_id=user_id,
        first_name="Grace",
        last_name="Hopper",
        email="grace@example.com",
        address=ADDRESS,
        account={
            "account_type": "WIRE",
            "account_number": "123456789012",
            "routing_number": "021000021",
            "bank_name": "Chase",
        },
    )


def _otp(client: Upstream, emulator: LiveEmulator, email: str) -> str:
    sent = call_sync(client.verification.send_otp, email=email)
    assert isinstance(sent, OtpSent) and sent.success
    _aware(sent.expires_at)
    messages = emulator.control("GET", "mailbox", params={"email": email})["messages"]
    code = str(messages[0]["code"])
    assert len(code) == 6 and code.isdigit()
    return code


def test_full_sandbox_walk(live_emulator: LiveEmulator, sandbox: Environment) -> None:
    client = upstream(sandbox)
    token = call_sync(client.auth.token)
    assert token.access_token and token.expires_in > 0

    # Users: the idempotency key is committed with its object before the first call.
    email = f"ada-{uuid.uuid4().hex[:8]}@example.com"
    user = _user(client, sandbox, email)
    assert EndUser.objects.filter(environment=sandbox, email=email).count() == 1
    assert isinstance(user, User) and user.email == email
    assert user.status == "verified" and user.verification_status == "verified"
    _documented(user, "user_id", "type", "email", "phone", "status", "verification_status")
    assert _user(client, sandbox, email).user_id == user.user_id  # replayed, not a second user
    assert live_emulator.witness.count("/sandbox/v1/users", "POST") == 2
    got = call_sync(client.users.get, user.user_id)
    assert got.user_id == user.user_id
    updated = call_sync(client.users.update, user.user_id, phone_number="+15125550199")
    assert isinstance(updated, User) and updated.user_id == user.user_id

    # Virtual accounts: created activating, active after the clock moves and a tick runs.
    account = _active_account(client, live_emulator, user.user_id, "fiat")
    listed = call_sync(client.virtual_accounts.list, user_id=user.user_id)
    assert [item.id for item in listed] == [account.id]
    balance = call_sync(client.virtual_accounts.balance, account.id)
    assert isinstance(balance, Balance) and balance.available_balance == Decimal("0.00")
    live_emulator.control(
        "POST", "deposits", json={"virtual_account_id": account.id, "amount": "5000.00"}
    )
    balance = call_sync(client.virtual_accounts.balance, account.id)
    assert balance.available_balance == Decimal("5000.00") and balance.currency == "USD"
    assert isinstance(balance.available_balance, Decimal)
    _aware(balance.updated_at)
    _documented(balance, *Balance.model_fields)

    # Recipients.
    recipient = _wire_recipient(client, user.user_id)
    assert isinstance(recipient, Recipient) and recipient.recipient_id
    _aware(recipient.created_ts)
    _documented(recipient, "recipient_id", "user_id", "email", "address", "account", "created_ts")
    assert call_sync(client.recipients.get, recipient.recipient_id).email == "grace@example.com"
    page = call_sync(client.recipients.list, user_id=user.user_id)
    assert isinstance(page, RecipientPage) and page.total == 1
    assert page.recipients[0].recipient_id == recipient.recipient_id

    # Quotations.
    quote = call_sync(
        client.quotations.create, quote_currency="USD", amount=100, account_type="WIRE"
    )
    assert isinstance(quote, Quote) and quote.status is QuoteStatus.ACTIVE
    _documented(quote, *(set(Quote.model_fields) - {"network"}))
    assert call_sync(client.quotations.get, quote.quote_id).quote_id == quote.quote_id
    repriced = call_sync(client.quotations.update, quote.quote_id, amount=Decimal("120.00"))
    assert repriced.base_amount == Decimal("120.00")
    _aware(repriced.expiration_ts)

    # Payout preview, both paths, with and without a reserved quote.
    plain = call_sync(
        client.payouts.preview,
        virtual_account_id=account.id,
        amount=Decimal("100.00"),
        recipient_id=recipient.recipient_id,
    )
    assert isinstance(plain, PayoutPreview) and plain.quote_id is None
    assert plain.amount == Decimal("100.00") and plain.recipient_currency == "USD"
    _documented(plain, "amount", "currency", "fees", "recipient_amount", "recipient_currency")
    reserved = call_sync(
        client.payouts.preview,
        virtual_account_id=account.id,
        amount=Decimal("100.00"),
        recipient_id=recipient.recipient_id,
        create_quote=True,
        alias=True,
    )
    assert reserved.quote_id and reserved.fees is not None
    _aware(reserved.quote_expires_at)
    assert reserved.recipient_amount == plain.recipient_amount
    assert live_emulator.witness.count("/sandbox/payout/preview", "POST") == 1

    # Fiat payouts: with the reserved quote, then priced at execution time.
    with_quote = call_sync(
        client.payouts.initiate,
        virtual_account_id=account.id,
        idempotency_key=str(uuid.uuid4()),
        recipient_id=recipient.recipient_id,
        amount=Decimal("100.00"),
        quote_id=reserved.quote_id,
        otp=_otp(client, live_emulator, email),
    )
    assert isinstance(with_quote, PayoutCreated)
    assert with_quote.status is PayoutStatus.CREATED  # the lowercase "created", normalised
    assert with_quote.quote_id == reserved.quote_id and with_quote.amount == Decimal("100.00")
    _documented(with_quote, *(set(PayoutCreated.model_fields) - {"deposit_instructions"}))
    without_quote = call_sync(
        client.payouts.initiate,
        virtual_account_id=account.id,
        idempotency_key=str(uuid.uuid4()),
        recipient_id=recipient.recipient_id,
        amount="250.03",  # the sandbox sends .03 to review, then fails it
        otp=_otp(client, live_emulator, email),
        extra_info={"memo": "invoice 42"},
        reference="INV-42",
    )
    assert without_quote.status is PayoutStatus.CREATED

    record = call_sync(client.payouts.get, with_quote.id)
    assert isinstance(record, Payout) and record.payout_id == with_quote.id
    assert record.status is PayoutStatus.CREATED and record.quote_id == reserved.quote_id
    assert isinstance(record.from_amount, Decimal) and record.from_amount == Decimal("100.00")
    assert record.events and record.events[0].status is PayoutStatus.CREATED
    _aware(record.created_at)
    _aware(record.updated_at)
    _documented(record, *(set(Payout.model_fields) - {"uetr"}))
    for _ in range(3):
        live_emulator.advance(5)
        live_emulator.control("POST", "tick")
    walked = call_sync(client.payouts.get, with_quote.id)
    assert walked.status is PayoutStatus.COMPLETED
    assert [e.status for e in walked.events] == [
        PayoutStatus.CREATED,
        PayoutStatus.PENDING,
        PayoutStatus.PROCESSING,
        PayoutStatus.COMPLETED,
    ]
    assert call_sync(client.payouts.get, without_quote.id).status is PayoutStatus.FAILED
    payouts = call_sync(client.payouts.list, limit=10)
    assert isinstance(payouts, PayoutPage) and payouts.total == 2 and payouts.limit == 10
    assert {p.payout_id for p in payouts.payouts} == {with_quote.id, without_quote.id}
    completed = call_sync(client.payouts.list, status=PayoutStatus.COMPLETED)
    assert [p.payout_id for p in completed.payouts] == [with_quote.id]
    dated = call_sync(
        client.payouts.list, from_date=record.created_at.date(), to_date=record.created_at.date()
    )
    assert dated.total == 2
    balance = call_sync(client.virtual_accounts.balance, account.id)
    # The failed payout was refunded; the completed one cost its amount plus fees.
    assert Decimal("4800.00") < balance.available_balance < Decimal("4900.00")

    # Crypto payout: deposit instructions instead of an OTP.
    crypto_account = _active_account(client, live_emulator, user.user_id, "crypto")
    crypto = call_sync(
        client.payouts.initiate,
        virtual_account_id=crypto_account.id,
        idempotency_key=str(uuid.uuid4()),
        recipient_id=recipient.recipient_id,
        amount=Decimal("300.00"),
        payment_instructions={"network": "tron", "currency": "USDT"},
        supporting_documents=[{"type": "invoice", "file_name": "invoice.pdf", "file": PDF}],
    )
    assert crypto.status is PayoutStatus.CREATED and crypto.deposit_instructions is not None
    instructions = crypto.deposit_instructions
    assert instructions.network == "tron" and instructions.currency == "USDT"
    assert instructions.amount > Decimal("300.00") and instructions.wallet_address.startswith("T")
    _aware(instructions.expires_at)
    live_emulator.control(
        "POST", f"payouts/{crypto.id}/deposit", json={"amount": str(instructions.amount)}
    )
    live_emulator.advance(5)
    live_emulator.control("POST", "tick")
    assert call_sync(client.payouts.get, crypto.id).status is PayoutStatus.KYT_PENDING

    # Webhook registration answers a message and no id.
    registered = call_sync(
        client.webhooks.register,
        webhook_url="http://127.0.0.1:9/hooks",
        secret="whsec-e2e",
        client_uuid=sandbox.client_id,
    )
    assert isinstance(registered, Message) and registered.message

    paths = [r["path"] for r in live_emulator.witness.api_requests()]
    assert all(p.startswith("/sandbox/") for p in paths), paths
    assert 429 not in live_emulator.witness.statuses()
    # Every operation of the contract went through the gateway, on its documented method and path.
    calls = UpstreamCall.objects.filter(environment=sandbox)
    seen = logged_operations_match(list(calls.values_list("operation", "method", "path")))
    assert seen == {operation.name for operation in OPERATIONS}
    assert not calls.exclude(status__in=(200, 201)).exists()


def _funded(
    client: Upstream, emulator: LiveEmulator, environment: Environment, amount: str
) -> tuple[User, VirtualAccount, Recipient]:
    email = f"err-{uuid.uuid4().hex[:8]}@example.com"
    user = _user(client, environment, email)
    account = _active_account(client, emulator, user.user_id, "fiat")
    emulator.control("POST", "deposits", json={"virtual_account_id": account.id, "amount": amount})
    return user, account, _wire_recipient(client, user.user_id)


def _initiate(client: Upstream, account: VirtualAccount, recipient: Recipient, **kw: Any) -> Any:
    return call_sync(
        client.payouts.initiate,
        virtual_account_id=account.id,
        idempotency_key=str(uuid.uuid4()),
        recipient_id=recipient.recipient_id,
        **kw,
    )


def test_error_paths_reach_the_caller_typed(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    client = upstream(sandbox)
    user, account, recipient = _funded(client, live_emulator, sandbox, "500.00")
    email = str(user.email)

    with pytest.raises(ValidationError) as caught:
        _initiate(
            client, account, recipient, amount="1000.00", otp=_otp(client, live_emulator, email)
        )
    assert caught.value.status == 422 and caught.value.code == "INSUFFICIENT_FUNDS"
    assert not caught.value.retryable
    assert "amount" in caught.value.form_errors()

    with pytest.raises(ValidationError) as caught:
        _initiate(client, account, recipient, amount="100.00", otp="000000")
    assert caught.value.code in ("INVALID_OTP", "OTP_REQUIRED")
    assert caught.value.status == 400

    quote = call_sync(
        client.quotations.create, quote_currency="USD", amount=100, account_type="WIRE"
    )
    live_emulator.advance(601)
    with pytest.raises(ValidationError) as caught:
        call_sync(client.quotations.update, quote.quote_id, amount=200)
    assert caught.value.code == "QUOTE_INVALID_STATE" and caught.value.status == 400

    with pytest.raises(ValidationError) as caught:
        call_sync(
            client.recipients.create,
            user_id=user.user_id,
            first_name="No",
            last_name="Routing",
            email="not-an-email",
            address=ADDRESS,
            account={"account_type": "WIRE", "account_number": "1", "bank_name": "X"},
        )
    form_errors = caught.value.form_errors()
    assert caught.value.code == "validation_error" and form_errors
    assert all(isinstance(msgs, list) and msgs for msgs in form_errors.values())
    assert any("routing_number" in name for name in form_errors), form_errors
    form = RecipientForm(
        data={
            "first_name": "No",
            "email": "not-an-email",
            "account_number": "1",
            "routing_number": "",
        }
    )
    caught.value.add_to_form(form)
    assert form.errors["routing_number"] and form.errors["email"]
    assert not form.is_valid()

    with pytest.raises(NotFoundError) as caught:
        call_sync(client.payouts.get, str(uuid.uuid4()))
    assert caught.value.status == 404 and caught.value.code == "PAYOUT_NOT_FOUND"
    with pytest.raises(NotFoundError):
        call_sync(client.users.get, str(uuid.uuid4()))

    # Another client's payout: the upstream answers 403, the product treats it as not found.
    payout = _initiate(
        client, account, recipient, amount="100.00", otp=_otp(client, live_emulator, email)
    )
    stranger = Environment.objects.get(pk=sandbox.pk)
    stranger.pk = None
    stranger.name = "Another client"
    credentials = live_emulator.new_client()
    stranger.set_credentials(**credentials)
    stranger.save()
    with pytest.raises(NotFoundError) as caught:
        call_sync(upstream(stranger).payouts.get, payout.id)
    assert caught.value.status == 403 and caught.value.code == "FORBIDDEN"
