"""Factories shared by the quote and payout tests: staff by role, directory records, drafts."""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import Group
from django.utils import timezone

from accounts.models import Recipient, VirtualAccount
from gateway.models import Environment, EnvironmentKind
from payouts.models import Payout
from quotes.arithmetic import QuoteFigures
from staff.models import StaffUser
from staff.roles import roles_sync
from users.models import EndUser

_serial = itertools.count(1)


def make_staff(role: str, email: str | None = None) -> StaffUser:
    roles_sync()
    user = StaffUser.objects.create_user(
        email or f"{role}{next(_serial)}@payops.test", "pw-not-secret-123", full_name=role
    )
    user.groups.add(Group.objects.get(name=role))
    return user


def make_environment(name: str = "Offline sandbox") -> Environment:
    environment = Environment(
        name=name, kind=EnvironmentKind.SANDBOX, base_url="https://upstream.invalid"
    )
    environment.set_credentials(client_id="c", password="p", api_key="k")
    environment.verified_at = timezone.now()  # as if an admin's connection test had passed
    environment.save()
    return environment


def make_end_user(environment: Environment, **fields: Any) -> EndUser:
    values: dict[str, Any] = {
        "environment": environment,
        "email": f"user{next(_serial)}@example.test",
        "first_name": "Ana",
        "last_name": "Silva",
        "country": "US",
        "status": "verified",
        "verification_status": "verified",
        "upstream_id": f"user-{next(_serial)}",
    }
    values.update(fields)
    return EndUser.objects.create(**values)


def make_virtual_account(
    environment: Environment, end_user: EndUser | None = None, **fields: Any
) -> VirtualAccount:
    values: dict[str, Any] = {
        "environment": environment,
        "end_user": end_user or make_end_user(environment),
        "mode": "fiat",
        "status": "active",
        "available_balance": Decimal("5000.00"),
        "upstream_id": f"va-{next(_serial)}",
    }
    values.update(fields)
    return VirtualAccount.objects.create(**values)


def make_recipient(
    environment: Environment, end_user: EndUser, created_by: StaffUser, **fields: Any
) -> Recipient:
    values: dict[str, Any] = {
        "environment": environment,
        "end_user": end_user,
        "kind": "individual",
        "first_name": "Bea",
        "last_name": "Ruiz",
        "street_name": "1 Main St",
        "city": "Austin",
        "country": "US",
        "account_type": "WIRE",
        "account_number": "123456789",
        "routing_number": "021000021",
        "created_by": created_by,
        "upstream_id": f"rcp-{next(_serial)}",
        # Payable: dual control's approval is what tests/directory/test_recipient_control.py
        # proves; payout tests start from a recipient a second person approved.
        "status": "approved",
        "approval_note": "test fixture",
    }
    values.update(fields)
    return Recipient.objects.create(**values)


def make_draft(
    *,
    maker: StaffUser,
    environment: Environment | None = None,
    amount: str = "100.00",
    **fields: Any,
) -> Payout:
    environment = environment or make_environment()
    account = fields.pop("virtual_account", None) or make_virtual_account(environment)
    recipient = fields.pop("recipient", None) or make_recipient(
        environment, account.end_user, created_by=maker
    )
    return Payout.objects.create(
        environment=environment,
        maker=maker,
        virtual_account=account,
        recipient=recipient,
        amount=Decimal(amount),
        **fields,
    )


def upstream_directory(
    environment: Environment,
    emulator: Any,
    *,
    maker: StaffUser,
    mode: str = "fiat",
    deposit: str = "5000.00",
) -> tuple[VirtualAccount, Recipient]:
    """A verified user, an active virtual account (funded) and a WIRE recipient that exist in the
    emulator, mirrored locally as the directory would have them."""
    import uuid as _uuid

    from gateway.client import call_sync, upstream

    client = upstream(environment)
    email = f"payer-{_uuid.uuid4().hex[:8]}@example.com"
    user = call_sync(
        client.users.create,
        idempotency_key=str(_uuid.uuid4()),
        email=email,
        phone_number="+15125550100",
        first_name="Ada",
        last_name="Lovelace",
        country="US",
    )
    account = call_sync(client.virtual_accounts.create, user_id=user.user_id, mode=mode)
    emulator.advance(10)
    emulator.control("POST", "tick")
    if deposit and mode == "fiat":
        emulator.control(
            "POST", "deposits", json={"virtual_account_id": account.id, "amount": deposit}
        )
    balance = call_sync(client.virtual_accounts.balance, account.id)
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
    end_user = make_end_user(environment, email=email, upstream_id=user.user_id)
    local_account = make_virtual_account(
        environment,
        end_user,
        upstream_id=account.id,
        mode=mode,
        available_balance=balance.available_balance,
        balance_as_of=balance.updated_at,
    )
    local_recipient = make_recipient(
        environment,
        end_user,
        created_by=maker,
        upstream_id=recipient.recipient_id,
        first_name="Grace",
        last_name="Hopper",
        account_number="123456789012",
    )
    return local_account, local_recipient


# interface.md 4.2's worked example: 1,000 USD to MXN, the fees by hand (tests/quotes).
MXN_1000 = QuoteFigures(
    base_amount=Decimal("1000.00"),
    quote_amount=Decimal("17095.06"),
    rate=Decimal("17.25"),
    service_rate=Decimal("17.198250"),
    base_fixed_fee=Decimal("1.00"),
    base_percentage_fee=Decimal("0.005"),
    base_fx_markup=Decimal("0.003"),
    client_fixed_fee=Decimal("0"),
    client_percentage_fee=Decimal("0"),
    client_fx_markup=Decimal("0"),
    penalty_markup=Decimal("0"),
    total_fees=Decimal("6.00"),
)
