"""The payout state machine: one transition table, the sandbox outcome plans, one move function."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import F

from emulator.domain.events import emit_about
from emulator.domain.formats import iso, money
from emulator.models import Payout, VirtualAccount

CREATED = "CREATED"
PENDING = "PENDING"
PROCESSING = "PROCESSING"
COMPLETED = "COMPLETED"
FAILED = "FAILED"
CANCELLED = "CANCELLED"
IN_REVIEW = "IN_REVIEW"
KYT_PENDING = "KYT_PENDING"

# Allowed moves (decisions.md 3). COMPLETED is not final: a return moves it to FAILED.
TRANSITIONS: dict[str, frozenset[str]] = {
    CREATED: frozenset({PENDING, IN_REVIEW, KYT_PENDING, CANCELLED, FAILED}),
    PENDING: frozenset({PROCESSING, FAILED, CANCELLED}),
    IN_REVIEW: frozenset({COMPLETED, FAILED, PROCESSING}),
    KYT_PENDING: frozenset({PROCESSING, IN_REVIEW, FAILED}),
    PROCESSING: frozenset({COMPLETED, FAILED}),
    COMPLETED: frozenset({FAILED}),
    FAILED: frozenset(),
    CANCELLED: frozenset(),
}
FINAL = frozenset({FAILED, CANCELLED})


class IllegalTransition(Exception):
    """A move the table does not allow: a bug in the caller, never an API answer."""


def step_delay() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "EMULATOR_PAYOUT_STEP_SECONDS", 3)))


def outcome_plan(*, amount: Decimal, mode: str, environment: str) -> list[str]:
    """The statuses a new payout will walk; in sandbox its cents choose the outcome."""
    cents = f"{amount:.2f}"[-3:]
    if environment != "sandbox":
        cents = ".00"
    tail: list[str]
    if cents == ".02":
        tail = [IN_REVIEW, COMPLETED]
    elif cents == ".03":
        tail = [IN_REVIEW, FAILED]
    elif cents == ".04":
        tail = [PROCESSING, COMPLETED, FAILED]
    else:
        tail = [PROCESSING, COMPLETED]
    if mode == "crypto":
        return [CREATED, KYT_PENDING, *tail]
    if tail[0] == PROCESSING:
        return [CREATED, PENDING, *tail]
    return [CREATED, *tail]


def next_planned(payout: Payout) -> str | None:
    plan: list[str] = list(payout.plan)
    if payout.status not in plan:
        return None
    index = plan.index(payout.status)
    return plan[index + 1] if index + 1 < len(plan) else None


def event_data(payout: Payout, **extra: Any) -> dict[str, Any]:
    return {
        "payout_id": str(payout.payout_id),
        "virtual_account_id": str(payout.virtual_account_id),
        "status": payout.status,
        "amount": money(payout.amount),
        "currency": payout.currency,
        "created_at": iso(payout.created_at),
        **extra,
    }


def move(payout: Payout, to: str, *, at: datetime, reason: str = "") -> None:
    """Moves a locked payout to `to` with its events and money effects; call inside a transaction.

    A failure after the balance was debited (review rejected, returned) gives the funds back.
    """
    previous = payout.status
    if to not in TRANSITIONS[previous]:
        raise IllegalTransition(f"{previous} -> {to}")
    returned = previous == COMPLETED and to == FAILED
    payout.status = to
    payout.updated_at = at
    payout.events = [*payout.events, {"status": to, "at": iso(at)}]
    if to in FINAL:
        payout.failure_reason = reason or ("returned" if returned else "rejected_in_review")
    planned_next = next_planned(payout)
    payout.next_step_at = at + step_delay() if planned_next and to not in FINAL else None
    if to in (FAILED, CANCELLED) and payout.debited_amount > 0:
        VirtualAccount.objects.filter(pk=payout.virtual_account_id).update(
            balance=F("balance") + payout.debited_amount, updated_at=at
        )
        payout.debited_amount = Decimal("0")
    payout.save()
    emit_about(
        payout,
        "payout.status_changed",
        {
            "event_type": "payout.status_changed",
            "created_at": iso(at),
            "data": {
                "payout_id": str(payout.payout_id),
                "status": to,
                "previous_status": previous,
            },
        },
    )
    if returned:
        emit_about(payout, "payout.returned", event_data(payout, reason=payout.failure_reason))
    elif to == COMPLETED:
        emit_about(payout, "payout.completed", event_data(payout))
    elif to in (FAILED, CANCELLED):
        emit_about(payout, "payout.failed", event_data(payout, reason=payout.failure_reason))
