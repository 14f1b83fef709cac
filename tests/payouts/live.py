"""A live payout world on the emulator over HTTP: a funded account, a recipient, their mirrors."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import transaction

from accounts.models import Recipient, VirtualAccount
from gateway.client import call_sync, upstream
from gateway.models import Environment
from payouts.approval.services import payout_approve
from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.release.code import payout_otp_confirm, payout_otp_send
from payouts.states import payout_transition
from staff.models import StaffUser
from tests.gateway.conftest import LiveEmulator
from users.models import EndUser

VERIFICATION_EMAIL = "otp@payops.test"
_serial = itertools.count(1)


@dataclass
class World:
    emulator: LiveEmulator
    environment: Environment
    account: VirtualAccount
    recipient: Recipient

    def payouts_upstream(self) -> list[dict[str, Any]]:
        """What the upstream holds (the truth for "how many payouts were made")."""
        client = upstream(self.environment)
        page = call_sync(client.payouts.list, limit=100)
        return [item.model_dump(mode="json") for item in page.payouts]

    def tick(self, times: int = 1, seconds: float = 5) -> None:
        for _ in range(times):
            self.emulator.advance(seconds)
            self.emulator.control("POST", "tick")

    def otp_code(self) -> str:
        messages = self.emulator.control("GET", "mailbox", params={"email": VERIFICATION_EMAIL})
        return str(messages["messages"][0]["code"])


def build_world(
    emulator: LiveEmulator,
    environment: Environment,
    *,
    recipient_creator: StaffUser,
    mode: str = "fiat",
    balance: str = "900000.00",
) -> World:
    environment.verification_email = VERIFICATION_EMAIL
    environment.save(update_fields=["verification_email"])
    client = upstream(environment)
    email = f"payee-{uuid.uuid4().hex[:8]}@example.com"
    user = call_sync(
        client.users.create,
        idempotency_key=str(uuid.uuid4()),
        email=email,
        phone_number="+15125550100",
        first_name="Ada",
        last_name="Lovelace",
        country="US",
    )
    account = call_sync(client.virtual_accounts.create, user_id=user.user_id, mode=mode)
    emulator.advance(10)
    emulator.control("POST", "tick")
    if mode == "fiat":
        emulator.control(
            "POST", "deposits", json={"virtual_account_id": account.id, "amount": balance}
        )
    recipient = call_sync(
        client.recipients.create,
        user_id=user.user_id,
        first_name="Grace",
        last_name="Hopper",
        email="grace@example.com",
        address={"street_name": "1 Main St", "city": "Austin", "country": "US"},
        account={
            "account_type": "WIRE",
            "account_number": "123456789012",
            "routing_number": "021000021",
            "bank_name": "Chase",
        },
    )
    end_user = EndUser.objects.create(
        environment=environment,
        upstream_id=user.user_id,
        email=email,
        first_name="Ada",
        last_name="Lovelace",
        country="US",
        status="verified",
        verification_status="verified",
    )
    mirror_account = VirtualAccount.objects.create(
        environment=environment,
        end_user=end_user,
        upstream_id=account.id,
        mode=mode,
        status="active",
        available_balance=Decimal(balance) if mode == "fiat" else Decimal("0"),
    )
    mirror_recipient = Recipient.objects.create(
        status="approved",  # dual control: a payable recipient
        environment=environment,
        end_user=end_user,
        upstream_id=recipient.recipient_id,
        kind="individual",
        first_name="Grace",
        last_name="Hopper",
        street_name="1 Main St",
        city="Austin",
        country="US",
        account_type="WIRE",
        account_number="123456789012",
        routing_number="021000021",
        created_by=recipient_creator,
    )
    return World(emulator, environment, mirror_account, mirror_recipient)


def submitted_payout(
    world: World, *, maker: StaffUser, amount: str = "100.00", **fields: Any
) -> Payout:
    """A payout its maker has sent for approval (the drafts' submission, as the table moves)."""
    with transaction.atomic():
        payout = Payout.objects.create(
            environment=world.environment,
            maker=maker,
            virtual_account=world.account,
            recipient=world.recipient,
            amount=Decimal(amount),
            mode=world.account.mode,
            reference=f"INV-{next(_serial)}",
            **fields,
        )
        payout_transition(
            payout, PayoutStatus.PENDING_APPROVAL, source=ChangeSource.STAFF, by=maker
        )
    return Payout.objects.get(pk=payout.pk)


PDF_BYTES = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def attach_pdf(payout: Payout, *, by: StaffUser, name: str = "invoice.pdf") -> None:
    """A supporting document stored through the storage API, as the drafts' upload stores it."""
    import hashlib

    from django.core.files.base import ContentFile

    from payouts.models import PayoutDocument

    PayoutDocument.objects.create(
        payout=payout,
        kind="invoice",
        file=ContentFile(PDF_BYTES, name=name),
        file_name=name,
        content_type="application/pdf",
        size=len(PDF_BYTES),
        sha256=hashlib.sha256(PDF_BYTES).hexdigest(),
        uploaded_by=by,
    )


def crypto_payout(world: World, *, maker: StaffUser, amount: str = "100.00") -> Payout:
    """A submitted crypto payout (USDC on solana) with its required document."""
    with transaction.atomic():
        payout = Payout.objects.create(
            environment=world.environment,
            maker=maker,
            virtual_account=world.account,
            recipient=world.recipient,
            amount=Decimal(amount),
            mode="crypto",
            payment_currency="USDC",
            payment_network="solana",
            reference=f"INV-{next(_serial)}",
        )
        attach_pdf(payout, by=maker)
        payout_transition(
            payout, PayoutStatus.PENDING_APPROVAL, source=ChangeSource.STAFF, by=maker
        )
    return Payout.objects.get(pk=payout.pk)


def initiated(world: World, staff: dict[str, StaffUser], amount: str) -> Payout:
    """A payout submitted by staff["maker"], approved and released by staff["approver"] with the
    emulator's code: the upstream has created it."""
    payout = submitted_payout(world, maker=staff["maker"], amount=amount)
    payout_approve(payout=payout, by=staff["approver"])
    payout_otp_send(payout=payout, by=staff["approver"])
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
    assert payout.status == PayoutStatus.CREATED
    return payout
