"""Control-surface scenarios for reconciliation: what happens upstream without PayOps knowing.

- a payout created outside PayOps (another integration of the same client): priced and debited
  like a real one, with its `payout.created` event;
- a payout's status changed without an event (the money effect of the move still happens);
- a balance adjusted by a signed amount, without an event;
- the next N webhook events dropped (stored, never delivered: `faults.drop_events_next`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import F

from emulator import clock
from emulator.database import EMULATOR_DB
from emulator.domain import payout_states as states
from emulator.domain.accounts import _locked_account
from emulator.domain.formats import iso, parse_decimal, parse_uuid, validation_error
from emulator.domain.payout_requests import parse_payout_request
from emulator.domain.payouts import payout_create
from emulator.errors import resource_error
from emulator.models import Payout, VirtualAccount

CENTS = Decimal("0.01")


def payout_outside(*, account_id: Any, recipient_id: Any, amount: Any, reference: Any) -> Payout:
    """A fiat payout made upstream by someone other than PayOps (no OTP: not PayOps's call)."""
    key = parse_uuid(account_id)
    account = VirtualAccount.objects.filter(id=key).first() if key else None
    if account is None:
        raise resource_error(404, "VIRTUAL_ACCOUNT_NOT_FOUND", "Virtual account not found")
    if account.mode != "fiat":
        raise validation_error([("virtual_account_id", "must be a fiat account")])
    body: dict[str, Any] = {"recipient_id": recipient_id, "amount": amount}
    if reference:
        body["reference"] = reference
    request = parse_payout_request(body)
    return payout_create(
        client=account.client,
        environment=account.environment,
        account_id=account.id,
        request=request,
        otp=None,
    )


def payout_status_silently(*, payout_id: Any, status: Any) -> Payout:
    """Move a payout as the table allows, with its money effect, and emit nothing."""
    key = parse_uuid(payout_id)
    word = str(status or "").upper()
    if word not in states.TRANSITIONS:
        raise validation_error([("status", "is not a payout status")])
    now = clock.now()
    with transaction.atomic(using=EMULATOR_DB):
        payout = Payout.objects.select_for_update().filter(payout_id=key).first() if key else None
        if payout is None:
            raise resource_error(404, "PAYOUT_NOT_FOUND", "Payout not found")
        if word not in states.TRANSITIONS[payout.status]:
            raise resource_error(
                409,
                "INVALID_STATUS_TRANSITION",
                f"A {payout.status} payout cannot become {word}",
                [("status", f"allowed: {', '.join(sorted(states.TRANSITIONS[payout.status]))}")],
            )
        returned = payout.status == states.COMPLETED and word == states.FAILED
        payout.status = word
        payout.updated_at = now
        payout.events = [*payout.events, {"status": word, "at": iso(now)}]
        payout.next_step_at = None  # the plan stops here: nobody moves it on
        if word in states.FINAL:
            payout.failure_reason = "returned" if returned else "failed_silently"
        if word in (states.FAILED, states.CANCELLED) and payout.debited_amount > 0:
            VirtualAccount.objects.filter(pk=payout.virtual_account_id).update(
                balance=F("balance") + payout.debited_amount, updated_at=now
            )
            payout.debited_amount = Decimal("0")
        payout.save()
    return payout


def balance_adjust(*, account_id: Any, amount: Any) -> VirtualAccount:
    """Add a signed amount to the balance (never below zero), with no event."""
    value = parse_decimal(amount)
    if value is None or value == 0 or value != value.quantize(CENTS):
        raise validation_error([("amount", "a signed non-zero amount in cents")])
    with transaction.atomic(using=EMULATOR_DB):
        account = _locked_account(account_id)
        if account.balance + value < 0:
            raise validation_error([("amount", "would make the balance negative")])
        account.balance = account.balance + value
        account.updated_at = clock.now()
        account.save(update_fields=["balance", "updated_at"])
    return account
