"""Virtual accounts: creation, activation on the emulator clock, balance and simulated deposits."""

from __future__ import annotations

import secrets
import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F

from emulator import clock
from emulator.database import EMULATOR_DB
from emulator.domain.events import emit_about
from emulator.domain.formats import CENTS, FieldErrors, iso, money, parse_decimal, parse_uuid
from emulator.domain.lookup import owned_or_404
from emulator.domain.users import user_get
from emulator.errors import resource_error
from emulator.models import ApiClient, VirtualAccount

# The only bank provider the emulator knows, in both environments (interface.md 4.8 names it).
BANKS = ("slovak_savings_bank",)
ACCOUNT_TYPES = ("US_BANK",)
MODES = ("fiat", "crypto")
CREATE_FIELDS = ("user_id", "type", "bank", "mode")
ROUTING_NUMBER = "021000021"
# Status moves the control surface may force (ours: decisions.md 3 names the states, no trigger).
# Activation itself stays with the clock (`accounts_activate_due`).
STATUS_MOVES: dict[str, tuple[str, ...]] = {
    "activating": ("failed",),
    "active": ("frozen", "deactivated"),
    "frozen": ("active", "deactivated"),
    "failed": (),
    "deactivated": (),
}


def activation_delay() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "EMULATOR_VA_ACTIVATION_SECONDS", 5)))


def account_payload(account: VirtualAccount) -> dict[str, Any]:
    return {
        "id": str(account.id),
        "user_id": str(account.user_id),
        "type": account.type,
        "bank": account.bank,
        "mode": account.mode,
        "status": account.status,
        "account_number": account.account_number or None,
        "routing_number": account.routing_number or None,
        "currency": account.currency,
        "created_at": iso(account.created_at),
        "updated_at": iso(account.updated_at),
    }


def _locked_account(account_id: Any) -> VirtualAccount:
    """The account, row-locked for the caller's transaction (control calls: any client)."""
    key = parse_uuid(account_id)
    account = VirtualAccount.objects.select_for_update().filter(id=key).first() if key else None
    if account is None:
        raise resource_error(404, "VIRTUAL_ACCOUNT_NOT_FOUND", "Virtual account not found")
    return account


def balance_payload(account: VirtualAccount) -> dict[str, Any]:
    return {
        "virtual_account_id": str(account.id),
        "available_balance": money(account.balance),
        "currency": account.currency,
        "updated_at": iso(account.updated_at),
    }


def account_get(*, client: ApiClient, environment: str, account_id: str) -> VirtualAccount:
    return owned_or_404(
        VirtualAccount,
        id_field="id",
        raw_id=account_id,
        client=client,
        environment=environment,
        code="VIRTUAL_ACCOUNT_NOT_FOUND",
        message="Virtual account not found",
        error_field="virtual_account_id",
    )


def account_create(*, client: ApiClient, environment: str, body: dict[str, Any]) -> VirtualAccount:
    errors = FieldErrors()
    for name in sorted(set(body) - set(CREATE_FIELDS)):
        errors.add(name, "is not a known field")
    for name in ("user_id", "type", "bank"):
        if not isinstance(body.get(name), str) or not body.get(name):
            errors.add(name, "is required")
    mode = body.get("mode", "fiat")
    if mode not in MODES:
        errors.add("mode", "must be fiat or crypto")
    if isinstance(body.get("type"), str) and body["type"] and body["type"] not in ACCOUNT_TYPES:
        errors.add("type", "must be US_BANK")
    errors.raise_if_any()
    if body["bank"] not in BANKS:
        raise resource_error(400, "INVALID_BANK", "Invalid bank", [("bank", "Invalid bank")])
    user = user_get(client=client, environment=environment, user_id=body["user_id"])
    if user.verification_status != "verified":
        raise resource_error(
            400,
            "USER_NOT_VERIFIED",
            "The user must be verified before a virtual account is opened",
            [("user_id", f"verification_status is {user.verification_status}")],
        )
    now = clock.now()
    with transaction.atomic(using=EMULATOR_DB):
        account = VirtualAccount.objects.create(
            client=client,
            environment=environment,
            user=user,
            type=body["type"],
            bank=body["bank"],
            mode=mode,
            status="activating",
            activate_at=now + activation_delay(),
            created_at=now,
            updated_at=now,
        )
        emit_about(
            account,
            "virtual_account.created",
            {
                "virtual_account_id": str(account.id),
                "user_id": str(user.user_id),
                "status": "activating",
            },
        )
    return account


def accounts_activate_due() -> int:
    """Activates every account whose activation time has come; returns how many."""
    now = clock.now()
    activated = 0
    due = VirtualAccount.objects.filter(status="activating", activate_at__lte=now)
    for account_id in list(due.values_list("id", flat=True)):
        with transaction.atomic(using=EMULATOR_DB):
            number = "".join(secrets.choice("0123456789") for _ in range(12))
            claimed = VirtualAccount.objects.filter(id=account_id, status="activating").update(
                status="active",
                account_number=number,
                routing_number=ROUTING_NUMBER,
                updated_at=now,
            )
            if not claimed:
                continue
            account = VirtualAccount.objects.select_related("client").get(id=account_id)
            emit_about(
                account,
                "virtual_account.activated",
                {
                    "virtual_account_id": str(account.id),
                    "user_id": str(account.user_id),
                    "status": "active",
                    "account_number": account.account_number,
                    "routing_number": account.routing_number,
                },
            )
            activated += 1
    return activated


def deposit_simulate(*, account_id: Any, amount: Any) -> dict[str, Any]:
    """A simulated incoming ACH deposit on an active account (control surface)."""
    value = parse_decimal(amount)
    if value is None or value <= 0 or value != value.quantize(CENTS):
        raise resource_error(
            400, "validation_error", "Invalid amount", [("amount", "a positive amount in cents")]
        )
    now = clock.now()
    with transaction.atomic(using=EMULATOR_DB):
        account = _locked_account(account_id)
        if account.status != "active":
            raise resource_error(
                400,
                "VIRTUAL_ACCOUNT_NOT_ACTIVE",
                "Deposits need an active virtual account",
                [("virtual_account_id", f"status is {account.status}")],
            )
        VirtualAccount.objects.filter(id=account.id).update(
            balance=F("balance") + value, updated_at=now
        )
        account.refresh_from_db()
        deposit_id = str(uuid.uuid4())
        emit_about(
            account,
            "virtual_account.deposit_funds_received",
            {
                "virtual_account_id": str(account.id),
                "deposit_id": deposit_id,
                "amount": money(value),
                "currency": account.currency,
                "source": {
                    "payment_rail": "ACH",
                    "sender_name": "Emulator Sender",
                    "trace_number": "".join(secrets.choice("0123456789") for _ in range(15)),
                },
                "created_at": iso(now),
            },
        )
    return {
        "deposit_id": deposit_id,
        "virtual_account_id": str(account.id),
        "amount": money(value),
        "available_balance": money(account.balance),
        "currency": account.currency,
    }


def account_set_status(*, account_id: Any, status: Any) -> VirtualAccount:
    """Forces a `failed`, `frozen`, `deactivated` (or unfrozen `active`) state (control surface).

    No event is emitted: neither document names one for these states.
    """
    with transaction.atomic(using=EMULATOR_DB):
        account = _locked_account(account_id)
        allowed = STATUS_MOVES.get(account.status, ())
        if status not in allowed:
            raise resource_error(
                409,
                "INVALID_STATUS_TRANSITION",
                f"A {account.status} virtual account cannot become {status}",
                [("status", f"allowed from {account.status}: {', '.join(allowed) or 'none'}")],
            )
        account.status = status
        account.updated_at = clock.now()
        account.save(update_fields=["status", "updated_at"])
    return account
