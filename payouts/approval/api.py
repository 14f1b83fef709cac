"""Approval endpoints: approve, reject, cancel, and the approval inbox."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from ninja import Field, Router, Schema

from console.inputs import MultilineText
from gateway.api_support import ERROR_RESPONSES, EnvironmentName
from payouts.api_support import ERRORS, PayoutStateOut, payout_action, state_out
from payouts.approval.selectors import SCOPE_ANYONE, SCOPE_MINE, approval_inbox, valid_approvals
from payouts.approval.services import payout_approve, payout_cancel, payout_reject
from payouts.models import Payout
from payouts.selectors import can_read_payouts
from quotes.api import environment_of, staff_of
from staff.errors import ServiceError

router = Router(tags=["approvals"])


class ApprovalOut(PayoutStateOut):
    complete: bool = Field(description="True when this approval was the last one needed.")


class RejectIn(Schema):
    reason: MultilineText = Field(description="Why (shown to the maker), at most 500 characters.")


class CancelIn(Schema):
    reason: MultilineText = Field("", description="Optional, for the audit trail.")


@router.post(
    "/payouts/{payout_id}/approve",
    response={200: ApprovalOut, **ERRORS},
    operation_id="payouts_approvals_api_approve",
)
def approve(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """Approve (approvers; never the maker nor the recipient's creator; once per person)."""
    outcome = payout_action(request, payout_id, environment, payout_approve)
    fresh = Payout.objects.select_related("recipient").get(pk=payout_id)
    return 200, ApprovalOut(**state_out(fresh).dict(), complete=outcome.complete)


@router.post(
    "/payouts/{payout_id}/reject",
    response={200: PayoutStateOut, **ERRORS},
    operation_id="payouts_approvals_api_reject",
)
def reject(
    request: HttpRequest,
    payout_id: int,
    payload: RejectIn,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Reject with a reason: the payout goes back to its maker."""
    payout = payout_action(request, payout_id, environment, payout_reject, reason=payload.reason)
    return 200, state_out(payout)


@router.post(
    "/payouts/{payout_id}/cancel",
    response={200: PayoutStateOut, **ERRORS},
    operation_id="payouts_approvals_api_cancel",
)
def cancel(
    request: HttpRequest,
    payout_id: int,
    payload: CancelIn | None = None,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Withdraw a payout not yet sent upstream (its maker or an approver)."""
    reason = payload.reason if payload else ""
    payout = payout_action(request, payout_id, environment, payout_cancel, reason=reason)
    return 200, state_out(payout)


class InboxItemOut(Schema):
    id: int
    amount: Decimal = Field(description="In `currency`.")
    currency: str
    corridor: str = Field(description="Source → destination currency.")
    recipient: str
    rail: str
    maker: str
    submitted_at: datetime | None
    preview_recipient_amount: Decimal | None
    preview_recipient_currency: str
    documents: int
    approvals: int
    approvals_required: int


@router.get(
    "/approvals",
    response={200: list[InboxItemOut], **ERROR_RESPONSES},
    operation_id="payouts_approvals_api_approvals",
)
def approvals(
    request: HttpRequest,
    scope: str = SCOPE_MINE,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """My approval inbox (`scope=mine`, default) or every payout waiting (`scope=anyone`)."""
    user = staff_of(request)
    if scope not in (SCOPE_MINE, SCOPE_ANYONE):
        raise ServiceError("scope is mine or anyone.", errors=[("scope", "must be mine or anyone")])
    if not can_read_payouts(user):
        raise PermissionDenied("Not allowed.")
    rows = approval_inbox(user=user, environment=environment_of(request, environment), scope=scope)
    return 200, [
        InboxItemOut(
            id=p.pk,
            amount=p.amount,
            currency=p.currency,
            corridor=p.corridor,
            recipient=p.recipient.display_name,
            rail=p.recipient.account_type,
            maker=p.maker.email,
            submitted_at=p.submitted_at,
            preview_recipient_amount=p.preview_recipient_amount,
            preview_recipient_currency=p.preview_recipient_currency,
            documents=len(p.documents.all()),
            approvals=len(valid_approvals(p)),
            approvals_required=p.approvals_required,
        )
        for p in rows
    ]
