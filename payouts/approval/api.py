"""Approval endpoints: approve, reject, cancel, and the approval inbox."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.utils.translation import gettext
from ninja import Field, Router, Schema
from ninja.params.functions import Query as QueryParam

from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES, Limit, Offset
from console.inputs import Amount, MultilineText, Text
from gateway.api_support import ChangeOut, EnvironmentName
from payouts.api_support import ERRORS, PayoutStateOut, payout_action, state_out
from payouts.approval.policy import (
    approval_policy_current,
    policy_validate,
)
from payouts.approval.policy_changes import approval_policy_propose
from payouts.approval.rules import ChainStep, LimitSpec, RuleSpec, chain_total
from payouts.approval.selectors import (
    INBOX_SORT_DEFAULT,
    INBOX_SORTS,
    SCOPE_ANYONE,
    SCOPE_MINE,
    InboxFilters,
    approval_inbox_slice,
    policy_impact,
    valid_approvals,
)
from payouts.approval.services import (
    payout_approval_withdraw,
    payout_approve,
    payout_cancel,
    payout_reject,
)
from payouts.drafts.api import PayoutCorridor, PayoutSearch
from payouts.models import ApprovalPolicy, Payout
from payouts.selectors import can_read_payouts
from quotes.api import environment_of, staff_of
from staff import roles
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.roles import APPROVAL_POLICY_MANAGE

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
@needs(roles.PAYOUT_APPROVE, roles.APPROVAL_POLICY_MANAGE)
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
@needs(roles.PAYOUT_APPROVE)
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
@needs(roles.PAYOUT_INITIATE, roles.PAYOUT_APPROVE)
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


INBOX_SORT_HELP = "; ".join(f"`{key}`: {label.lower()}" for key, (label, _) in INBOX_SORTS.items())


@router.get(
    "/approvals",
    response={200: list[InboxItemOut], **ERROR_RESPONSES},
    operation_id="payouts_approvals_api_approvals",
)
@needs(roles.FINANCE_VIEW, roles.COMPLIANCE_VIEW)
def approvals(
    request: HttpRequest,
    scope: str = SCOPE_MINE,
    q: Text = PayoutSearch,
    corridor: Text = PayoutCorridor,
    amount_min: Decimal | None = None,
    amount_max: Decimal | None = None,
    sort: str = QueryParam(INBOX_SORT_DEFAULT, description=INBOX_SORT_HELP),
    limit: int = Limit,
    offset: int = Offset,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """My approval inbox (`scope=mine`, default) or every payout waiting (`scope=anyone`),
    searched, filtered and ordered as the Approvals page is; `limit` rows from `offset`."""
    user = staff_of(request)
    if scope not in (SCOPE_MINE, SCOPE_ANYONE):
        raise ServiceError(
            "scope is mine or anyone.", errors=[("scope", gettext("must be mine or anyone"))]
        )
    if sort not in INBOX_SORTS:
        raise ServiceError(
            gettext("Unknown order."),
            errors=[
                ("sort", gettext("must be one of %(value)s") % {"value": ", ".join(INBOX_SORTS)})
            ],
        )
    if not can_read_payouts(user):
        raise PermissionDenied(gettext("Not allowed."))
    rows = approval_inbox_slice(
        user=user,
        environment=environment_of(request, environment),
        scope=scope,
        filters=InboxFilters(
            q=q, corridor=corridor, amount_min=amount_min, amount_max=amount_max, sort=sort
        ),
        offset=offset,
        limit=limit,
    )
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


# --- Undo -----------------------------------------------------------------------------------


class WithdrawIn(Schema):
    reason: MultilineText = Field(description="Why (kept in the audit trail), at most 500.")


@router.post(
    "/payouts/{payout_id}/approval/withdraw",
    response={200: PayoutStateOut, **ERRORS},
    operation_id="payouts_approvals_api_withdraw",
)
@needs(roles.PAYOUT_APPROVE, roles.APPROVAL_POLICY_MANAGE)
def withdraw(
    request: HttpRequest,
    payout_id: int,
    payload: WithdrawIn,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Withdraw your own approval before release: the payout waits for that step again."""
    payout = payout_action(
        request, payout_id, environment, payout_approval_withdraw, reason=payload.reason
    )
    return 200, state_out(payout)


# --- The approval policy --------------------------------------------------------------------


class ChainStepSchema(Schema):
    role: Text = Field("", description="A role key (finance_approver, admin); empty: any approver.")
    count: int = Field(ge=1, le=10)


class RuleSchema(Schema):
    min_amount: Amount = Field(Decimal("0"), ge=0, description="From this amount (inclusive).")
    currency: Text = Field("", max_length=8, description="Empty: any.")
    rail: Text = Field("", max_length=16, description="Empty: any.")
    mode: Text = Field("", max_length=8, description="fiat, crypto; empty: any.")
    required_approvals: int = Field(
        1, ge=1, le=10, description="Without a chain: this many approvers, any order."
    )
    chain: list[ChainStepSchema] = Field(
        default_factory=list, description="Ordered steps; when given, its total is the count."
    )
    country: Text = Field("", max_length=2, description="Recipient's country; empty: any.")
    channel: Text = Field("", max_length=4, description="page or api; empty: any.")
    maker_ids: list[int] = Field(default_factory=list, description="Makers (staff ids).")
    maker_roles: list[Text] = Field(default_factory=list, description="Makers holding a role.")
    recipient_younger_than_days: int | None = Field(
        None, ge=1, description="A recipient created fewer than this many days ago."
    )


class LimitSchema(Schema):
    subject: Text = Field(description="maker or recipient.")
    amount: Amount = Field(gt=0, max_digits=14, decimal_places=2)
    currency: Text = Field(max_length=8)
    days: int = Field(0, ge=0, le=366, description="0: the calendar day (UTC); N: rolling N days.")


class PolicyIn(Schema):
    default_required: int = Field(1, ge=1, le=10)
    rules: list[RuleSchema] = Field(default_factory=list)
    limits: list[LimitSchema] = Field(default_factory=list)
    recipient_approver_roles: list[Text] = Field(default_factory=list)
    note: Text = Field("", max_length=255)


class PolicyOut(PolicyIn):
    version: int | None = Field(description="None: nothing published yet (the default).")
    created_at: datetime | None
    created_by: str | None


class ImpactOut(Schema):
    payout_id: int
    amount: Decimal
    currency: str
    required_now: int
    required_under_draft: int
    chain_now: list[ChainStepSchema]
    chain_under_draft: list[ChainStepSchema]
    limit_exceeded: str | None = Field(description="The limit it would now exceed, in words.")
    changed: bool


def _rule_spec(rule: RuleSchema) -> RuleSpec:
    chain = tuple(ChainStep(step.role, step.count) for step in rule.chain)
    return RuleSpec(
        required_approvals=chain_total(chain) or rule.required_approvals,
        min_amount=rule.min_amount,
        currency=rule.currency.upper(),
        rail=rule.rail.upper(),
        mode=rule.mode.lower(),
        chain=chain,
        country=rule.country.upper(),
        channel=rule.channel,
        maker_ids=frozenset(rule.maker_ids),
        maker_roles=frozenset(rule.maker_roles),
        recipient_younger_than_days=rule.recipient_younger_than_days,
    )


def _limit_spec(limit: LimitSchema) -> LimitSpec:
    return LimitSpec(
        subject=limit.subject, amount=limit.amount, currency=limit.currency.upper(), days=limit.days
    )


def _rule_out(rule: RuleSpec) -> RuleSchema:
    return RuleSchema(
        min_amount=rule.min_amount,
        currency=rule.currency,
        rail=rule.rail,
        mode=rule.mode,
        required_approvals=rule.required_approvals,
        chain=[ChainStepSchema(role=s.role, count=s.count) for s in rule.chain],
        country=rule.country,
        channel=rule.channel,
        maker_ids=sorted(rule.maker_ids),
        maker_roles=sorted(rule.maker_roles),
        recipient_younger_than_days=rule.recipient_younger_than_days,
    )


def _policy_out(policy: ApprovalPolicy | None) -> PolicyOut:
    if policy is None:
        return PolicyOut(
            version=None, created_at=None, created_by=None, default_required=1, note=""
        )
    return PolicyOut(
        version=policy.version,
        created_at=policy.created_at,
        created_by=policy.created_by.email if policy.created_by else None,
        default_required=policy.default_required,
        rules=[_rule_out(rule) for rule in policy.specs()],
        limits=[
            LimitSchema(subject=x.subject, amount=x.amount, currency=x.currency, days=x.days)
            for x in policy.limit_specs()
        ],
        recipient_approver_roles=list(policy.recipient_approver_roles),
        note=policy.note,
    )


def _require_policy_manager(request: HttpRequest) -> StaffUser:
    user = staff_of(request)
    if not user.has_perm(APPROVAL_POLICY_MANAGE):
        raise PermissionDenied(gettext("The approval policy is managed by admins."))
    return user


@router.get(
    "/approval-policy",
    response={200: PolicyOut, **ERROR_RESPONSES},
    operation_id="payouts_approvals_api_policy",
)
@needs(roles.APPROVAL_POLICY_MANAGE)
def policy_read(request: HttpRequest) -> tuple[int, Any]:
    """The approval policy in force: its chains and conditions, limits, recipients' approvers."""
    _require_policy_manager(request)
    return 200, _policy_out(approval_policy_current())


@router.post(
    "/approval-policy/preview",
    response={200: list[ImpactOut], **ERROR_RESPONSES},
    operation_id="payouts_approvals_api_policy_preview",
)
@needs(roles.APPROVAL_POLICY_MANAGE)
def policy_preview(
    request: HttpRequest, payload: PolicyIn, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """What a draft policy would change for every payout waiting now (nothing is written)."""
    _require_policy_manager(request)
    rules = [_rule_spec(rule) for rule in payload.rules]
    limits = [_limit_spec(limit) for limit in payload.limits]
    policy_validate(
        default_required=payload.default_required,
        rules=rules,
        limits=limits,
        recipient_approver_roles=payload.recipient_approver_roles,
    )
    rows = policy_impact(
        rules=rules,
        default=payload.default_required,
        limits=limits,
        environment=environment_of(request, environment),
    )
    return 200, [
        ImpactOut(
            payout_id=row.payout.pk,
            amount=row.payout.amount,
            currency=row.payout.currency,
            required_now=row.required_now,
            required_under_draft=row.required_under_new,
            chain_now=[ChainStepSchema(role=s.role, count=s.count) for s in row.chain_now],
            chain_under_draft=[ChainStepSchema(role=s.role, count=s.count) for s in row.chain_new],
            limit_exceeded=row.breach.message if row.breach else None,
            changed=row.changed,
        )
        for row in rows
    ]


@router.post(
    "/approval-policy",
    response={202: ChangeOut, **ERROR_RESPONSES},
    operation_id="payouts_approvals_api_policy_publish",
)
@needs(roles.APPROVAL_POLICY_MANAGE)
def policy_publish(request: HttpRequest, payload: PolicyIn) -> tuple[int, Any]:
    """Propose the next version: an admin change another admin approves (202 with the change,
    `/changes/{id}`; with one admin it applies after the wait). Waiting payouts keep theirs."""
    user = _require_policy_manager(request)
    proposal = approval_policy_propose(
        by=user,
        default_required=payload.default_required,
        rules=[_rule_spec(rule) for rule in payload.rules],
        limits=[_limit_spec(limit) for limit in payload.limits],
        recipient_approver_roles=payload.recipient_approver_roles,
        note=payload.note,
    )
    return 202, ChangeOut.of(proposal)
