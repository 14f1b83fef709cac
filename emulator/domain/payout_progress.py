"""Payout progress on the emulator clock: the crypto deposit arriving and the tick's steps."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from django.db import transaction

from emulator import clock
from emulator.database import EMULATOR_DB
from emulator.domain import payout_states as states
from emulator.domain.events import emit_about
from emulator.domain.formats import parse_decimal
from emulator.errors import resource_error
from emulator.models import Payout


def payout_deposit(*, payout_id: str, amount: Any) -> Payout:
    """The stablecoin deposit of a crypto payout (control surface); enough funds start it."""
    value = parse_decimal(amount)
    if value is None or value <= 0:
        raise resource_error(400, "validation_error", "Invalid amount", [("amount", "positive")])
    try:
        key = uuid.UUID(str(payout_id))
    except ValueError:
        raise resource_error(404, "PAYOUT_NOT_FOUND", "Payout not found") from None
    now = clock.now()
    with transaction.atomic(using=EMULATOR_DB):
        payout = Payout.objects.select_for_update().filter(payout_id=key).first()
        if payout is None:
            raise resource_error(404, "PAYOUT_NOT_FOUND", "Payout not found")
        if payout.mode != "crypto" or payout.status != states.CREATED:
            raise resource_error(
                409,
                "PAYOUT_NOT_AWAITING_DEPOSIT",
                f"Payout is {payout.status} ({payout.mode}); no deposit is expected",
            )
        if payout.deposit_expires_at and now >= payout.deposit_expires_at:
            raise resource_error(409, "DEPOSIT_ADDRESS_EXPIRED", "The deposit address expired")
        if payout.next_step_at is not None:
            raise resource_error(409, "DEPOSIT_ALREADY_RECEIVED", "The deposit already arrived")
        received = (payout.deposit_received_amount or Decimal("0")) + value
        payout.deposit_received_amount = received
        payout.updated_at = now
        instructed = Decimal(str((payout.deposit_instructions or {}).get("amount", "0")))
        if received >= instructed:
            payout.next_step_at = now
            payout.save()
            emit_about(
                payout,
                "payout.deposit_received",
                # Exactly decisions.md 4's payout fields: the received amount is on the payout.
                data=states.event_data(payout),
            )
        else:
            payout.save()
    return payout


def payouts_step_due() -> int:
    """Moves every due payout one step along its plan; cancels expired crypto deposits."""
    now = clock.now()
    moved = 0
    expired = Payout.objects.filter(
        mode="crypto",
        status=states.CREATED,
        next_step_at__isnull=True,
        deposit_expires_at__lte=now,
    )
    for payout_id in list(expired.values_list("payout_id", flat=True)):
        with transaction.atomic(using=EMULATOR_DB):
            payout = Payout.objects.select_for_update().select_related("client").get(pk=payout_id)
            if payout.status == states.CREATED and payout.next_step_at is None:
                states.move(payout, states.CANCELLED, at=now, reason="deposit_address_expired")
                moved += 1
    due = Payout.objects.filter(next_step_at__lte=now).exclude(status__in=states.FINAL)
    for payout_id in list(due.values_list("payout_id", flat=True)):
        with transaction.atomic(using=EMULATOR_DB):
            payout = Payout.objects.select_for_update().select_related("client").get(pk=payout_id)
            target = states.next_planned(payout)
            if payout.next_step_at is None or payout.next_step_at > now or target is None:
                continue
            # Compare-and-set: a concurrent tick (SQLite has no row locks) finds nothing to claim.
            claimed = Payout.objects.filter(
                pk=payout.pk, status=payout.status, updated_at=payout.updated_at
            ).update(updated_at=now)
            if not claimed:
                continue
            states.move(payout, target, at=now)
            moved += 1
    return moved
