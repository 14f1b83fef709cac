"""Virtual-account events (created, activated, deposit received) applied to the mirror."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Deposit, VirtualAccount, VirtualAccountStatus
from accounts.ordering import should_move
from accounts.virtual_accounts import CENTS, VIRTUAL_ACCOUNT, apply_record, queue_refresh
from gateway.client import call_sync, upstream
from gateway.models import Environment
from gateway.schemas import VirtualAccount as UpstreamVirtualAccount
from users.mirror import (
    EventDataError,
    EventOutcome,
    event_record_id,
    mirror_apply_event,
    parse_time,
)
from users.models import EndUser
from users.services import queue_refresh as queue_end_user_refresh

DEPOSIT = "virtual_account.deposit_funds_received"
# The status an event without one means, and the timeline's words for it.
STATUS_EVENTS = {
    "virtual_account.created": ("activating", "Created upstream (activating)"),
    "virtual_account.activated": ("active", "Activated"),
}
VA_EVENTS = (*STATUS_EVENTS, DEPOSIT)


@dataclass(frozen=True)
class DepositRead:
    """A deposit event's data, checked."""

    amount: Decimal
    currency: str
    deposit_id: str
    received_at: datetime


def _read_deposit(data: dict[str, Any]) -> DepositRead:
    try:
        amount = Decimal(str(data.get("amount")))
    except InvalidOperation:
        raise EventDataError(f"amount {data.get('amount')!r} is not a decimal") from None
    if not amount.is_finite() or amount <= 0 or amount != amount.quantize(CENTS):
        raise EventDataError(f"amount {data.get('amount')!r} is not a positive cent amount")
    if not data.get("deposit_id") or not re.fullmatch(r"[A-Z]{3}", str(data.get("currency"))):
        raise EventDataError("a deposit needs deposit_id and a three-letter currency")
    received_at = parse_time(data.get("created_at"), field="created_at") or timezone.now()
    return DepositRead(amount, str(data["currency"]), str(data["deposit_id"]), received_at)


def _read_status(event_type: str, data: dict[str, Any]) -> str:
    incoming = str(data.get("status") or "").lower() or STATUS_EVENTS[event_type][0]
    if incoming not in VirtualAccountStatus.values:
        raise EventDataError(f"status {data.get('status')!r} is not a virtual account status")
    if not str(data.get("user_id") or "").strip():
        raise EventDataError(f"{event_type} without user_id")
    return incoming


def _end_user_mirror(environment: Environment, user_id: str) -> EndUser:
    """The end user an event names; an unknown one is mirrored (its refresh fills the rest)."""
    end_user = EndUser.objects.filter(environment=environment, upstream_id=user_id).first()
    if end_user is None:
        try:
            with transaction.atomic():
                end_user = EndUser.objects.create(environment=environment, upstream_id=user_id)
        except IntegrityError:
            return EndUser.objects.get(environment=environment, upstream_id=user_id)
        queue_end_user_refresh(end_user)
    return end_user


def _owner_of_unknown(environment: Environment, account_id: str) -> UpstreamVirtualAccount | None:
    """A deposit names no user: for an account we do not know, ask the upstream whose it is
    (outside any lock)."""
    if VirtualAccount.objects.filter(environment=environment, upstream_id=account_id).exists():
        return None
    fetched = call_sync(upstream(environment, background=True).virtual_accounts.get, account_id)
    if not str(fetched.user_id or ""):
        raise EventDataError(f"the upstream names no user for account {account_id}")
    return fetched


def virtual_account_apply_event(
    *, environment: Environment, event_type: str, data: dict[str, Any]
) -> VirtualAccount | None:
    """
    Apply virtual_account.created / .activated / .deposit_funds_received: idempotent (an
    event_id once per account, a deposit once per deposit_id), order-tolerant (a status only
    moves forward, accounts.ordering), mirroring an unknown account. Raises EventDataError on
    data it cannot read.
    """
    if event_type not in VA_EVENTS:
        raise EventDataError(f"not a virtual account event: {event_type!r}")
    account_id = event_record_id(data, id_field="virtual_account_id", event_type=event_type)
    user_id = str(data.get("user_id") or "").strip()
    fetched = None
    if event_type == DEPOSIT:
        deposit = _read_deposit(data)
        fetched = _owner_of_unknown(environment, account_id)
        user_id = str(fetched.user_id) if fetched is not None else user_id
    else:
        incoming = _read_status(event_type, data)

    def new_row() -> VirtualAccount:
        va = VirtualAccount(
            environment=environment,
            upstream_id=account_id,
            end_user=_end_user_mirror(environment, user_id),
        )
        if fetched is not None:
            apply_record(va, fetched.model_dump(mode="json"))
        return va

    def apply(va: VirtualAccount, is_new: bool) -> EventOutcome:
        if event_type == DEPOSIT:
            outcome = _record_deposit(va, deposit, data)
        else:
            outcome = _move_status(va, incoming, data, is_new=is_new, event_type=event_type)
        if outcome.applied:
            va.upstream_payload = {**va.upstream_payload, "last_event": data}
        else:
            outcome.summary += " (ignored: older than our state)"
        return outcome

    return mirror_apply_event(
        VIRTUAL_ACCOUNT,
        environment=environment,
        upstream_id=account_id,
        event_type=event_type,
        data=data,
        new_row=new_row,
        apply=apply,
    )


def _record_deposit(va: VirtualAccount, deposit: DepositRead, data: dict[str, Any]) -> EventOutcome:
    """A deposit once per deposit_id; the balance after it is asked for (the event has none)."""
    raw_source = data.get("source")
    source: dict[str, Any] = raw_source if isinstance(raw_source, dict) else {}
    _, created = Deposit.objects.get_or_create(
        virtual_account=va,
        deposit_id=deposit.deposit_id,
        defaults={
            "event_id": str(data.get("event_id") or ""),
            "amount": deposit.amount,
            "currency": deposit.currency,
            "payment_rail": str(source.get("payment_rail") or ""),
            "sender_name": str(source.get("sender_name") or ""),
            "trace_number": str(source.get("trace_number") or ""),
            "received_at": deposit.received_at,
            "upstream_payload": data,
        },
    )
    if created:
        # The event says what arrived, not the balance after it: ask for the balance.
        queue_refresh(va)
    summary = f"Deposit received: {deposit.amount:,.2f} {deposit.currency}" + (
        f" from {source.get('sender_name')}" if source.get("sender_name") else ""
    )
    return EventOutcome(applied=created, summary=summary)


def _move_status(
    va: VirtualAccount, incoming: str, data: dict[str, Any], *, is_new: bool, event_type: str
) -> EventOutcome:
    """A status only moves forward; activation details are kept whatever the order. An account
    that becomes active has its balance read (after commit, in the background) so that its first
    payout does not wait for someone to press Refresh."""
    applied = should_move(va.status, incoming, is_new=is_new)
    if applied:
        activates = incoming == VirtualAccountStatus.ACTIVE and va.status != incoming
        va.status = incoming
        if incoming == VirtualAccountStatus.ACTIVE:
            va.activated_at = va.activated_at or timezone.now()
        if activates:
            queue_refresh(va)
    for name in ("account_number", "routing_number"):
        if data.get(name) and not getattr(va, name):
            setattr(va, name, str(data[name]))
            applied = True
    return EventOutcome(applied=applied, summary=STATUS_EVENTS[event_type][1])
