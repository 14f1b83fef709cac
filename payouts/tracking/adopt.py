"""Adopting a payout made upstream outside PayOps: a read-only record of what the upstream holds.

Reconciliation (books) finds such a payout in `GET /v1/payouts`; a person who may reconcile
adopts it. The record is created in the upstream's state (never moved through our draft and
approval states: PayOps did not make it), with its timeline taken from the upstream's `events`
(FAILED after COMPLETED is a return, decisions.md 3), its charged figures from the record, and
the person who adopted it as its maker. From then on events and polling move it as any other.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import Recipient, VirtualAccount
from gateway.models import Environment
from gateway.schemas import Payout as UpstreamPayout
from payouts.models import ChangeSource, Payout, PayoutMode, PayoutStatus, PayoutStatusChange
from payouts.tracking.upstream_status import LOCAL
from staff.audit import audit_record
from staff.errors import ServiceError
from staff.models import StaffUser

S = PayoutStatus


def _timeline(record: UpstreamPayout) -> list[tuple[str, datetime]]:
    """(our status, at) for each of the upstream's events, a FAILED after COMPLETED a return."""
    moves: list[tuple[str, datetime]] = []
    completed = False
    for event in record.events:
        status = LOCAL[event.status]
        if status == S.FAILED and completed:
            status = S.RETURNED
        completed = completed or status == S.COMPLETED
        moves.append((status, event.at))
    if not moves or moves[-1][0] != _final_status(record, completed):
        moves.append((_final_status(record, completed), record.updated_at or timezone.now()))
    return moves


def _final_status(record: UpstreamPayout, completed: bool) -> str:
    status = LOCAL[record.status]
    return S.RETURNED if status == S.FAILED and completed else status


def _charged_fields(record: UpstreamPayout, created_at: datetime) -> dict[str, Any]:
    """What the upstream charged, as the payout's `charged_*` fields."""
    return {
        "charged_amount": record.from_amount,
        "charged_currency": record.from_currency or "USD",
        "charged_total_fees": record.fee,
        "charged_recipient_amount": record.to_amount,
        "charged_recipient_currency": record.to_currency or "",
        "charged_total": (record.from_amount or 0) + (record.fee or 0),
        "charged_total_currency": record.from_currency or "USD",
        "charged_at": created_at,
    }


def payout_adopt(
    *,
    environment: Environment,
    record: UpstreamPayout,
    virtual_account: VirtualAccount,
    recipient: Recipient,
    by: StaffUser,
) -> Payout:
    """Create the read-only payout (the caller checked its permission; one transaction)."""
    if Payout.objects.filter(environment=environment, upstream_id=record.payout_id).exists():
        raise ServiceError(
            gettext("PayOps already holds this payout."), code="already_known", status=409
        )
    moves = _timeline(record)
    created_at = record.created_at or timezone.now()
    with transaction.atomic():
        payout = Payout.objects.create(
            environment=environment,
            maker=by,
            virtual_account=virtual_account,
            recipient=recipient,
            amount=record.from_amount or 0,
            currency=record.from_currency or "USD",
            mode=PayoutMode.FIAT,
            reference=(record.reference or "")[:35],
            internal_notes="Adopted from the upstream: made outside PayOps.",
            upstream_id=record.payout_id,
            upstream_status=str(record.status).upper(),
            upstream_payload=record.model_dump(mode="json"),
            status=moves[-1][0],
            created_at=created_at,
            updated_at=timezone.now(),
            submitted_at=created_at,
            **_charged_fields(record, created_at),
            upstream_created_at=record.created_at,
        )
        previous = ""
        for status, at in moves:
            PayoutStatusChange.objects.create(
                payout=payout,
                from_status=previous,
                to_status=status,
                source=ChangeSource.SYSTEM,
                by=by,
                reason="adopted from the upstream",
                at=at,
            )
            previous = status
        audit_record(
            actor=by,
            action="payouts.adopted",
            target=payout,
            before={},
            after={
                "upstream_id": payout.upstream_id,
                "status": payout.status,
                "amount": payout.amount,
                "fee": payout.charged_total_fees,
            },
        )
    return payout
