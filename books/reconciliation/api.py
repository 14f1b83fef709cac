"""/api/v1/reconciliation: runs (list, read, start) and the exceptions queue with its actions.

Every operation states its permission beside itself (`@needs`, console.api_permissions):
readers need books.view_books, actions books.reconcile; the services check again.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from django.http import HttpRequest
from django.utils.translation import gettext
from ninja import Field, Router, Schema, Status

from accounts.models import VirtualAccount
from books.reconciliation import engine, exception_actions, selectors
from books.reconciliation.models import (
    ExceptionComment,
    ReconciliationException,
    ReconciliationRun,
)
from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES, ErrorOut, PageNumber, PageOut, PageSize, paginate
from console.inputs import MultilineText, Text
from gateway.api_support import EnvironmentName, acting_staff, api_environment
from staff import roles
from staff.errors import ServiceError
from staff.models import StaffUser

router = Router(tags=["books"])

KindName = Literal[
    "missing_upstream",
    "missing_in_payops",
    "status_differs",
    "amount_differs",
    "fee_differs",
    "rate_differs",
    "balance_differs",
]


class RunOut(Schema):
    id: int
    environment: str
    virtual_account_id: int | None
    window_start: datetime
    window_end: datetime
    state: str = Field(description="`running`, `paused`, `completed`, `failed`.")
    phase: str = Field(description="`payouts`, `unseen`, `balances`, `done`.")
    next_page: int
    total_pages: int | None
    calls_spent: int = Field(description="Upstream calls this run made (its budget spent).")
    payouts_checked: int
    accounts_checked: int
    findings: int = Field(description="Exceptions this run opened.")
    resolved: int = Field(description="Exceptions this run found agreeing (resolved itself).")
    interruptions: int
    paused_reason: str
    resume_after: datetime | None
    trigger: str
    started_by: str | None
    started_at: datetime
    finished_at: datetime | None

    @staticmethod
    def resolve_environment(obj: ReconciliationRun) -> str:
        return obj.environment.name

    @staticmethod
    def resolve_started_by(obj: ReconciliationRun) -> str | None:
        return obj.started_by.email if obj.started_by else None


class RunPage(PageOut[RunOut]):
    pass


class RunIn(Schema):
    virtual_account_id: int | None = Field(None, description="Only this account; all if absent.")
    window_start: datetime | None = Field(None, description="Default: start of yesterday (UTC).")
    window_end: datetime | None = Field(None, description="Default: now.")


class ExceptionOut(Schema):
    id: int
    environment: str
    kind: str
    key: str
    summary: str
    payout_id: int | None
    virtual_account_id: int | None
    upstream_id: str
    ours: dict[str, Any]
    theirs: dict[str, Any]
    difference: Decimal | None
    owner: str | None
    state: str = Field(description="`open`, `investigating`, `resolved`.")
    resolution_reason: str
    resolved_by: str | None
    resolved_at: datetime | None
    auto_resolved: bool
    first_seen_run_id: int
    last_seen_run_id: int
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_environment(obj: ReconciliationException) -> str:
        return obj.environment.name

    @staticmethod
    def resolve_owner(obj: ReconciliationException) -> str | None:
        return obj.owner.email if obj.owner else None

    @staticmethod
    def resolve_resolved_by(obj: ReconciliationException) -> str | None:
        return obj.resolved_by.email if obj.resolved_by else None


class ExceptionPage(PageOut[ExceptionOut]):
    pass


class CommentOut(Schema):
    id: int
    author: str
    body: str
    at: datetime

    @staticmethod
    def resolve_author(obj: ExceptionComment) -> str:
        return obj.author.email


class ExceptionDetailOut(ExceptionOut):
    comments: list[CommentOut]

    @staticmethod
    def resolve_comments(obj: ReconciliationException) -> list[ExceptionComment]:
        return list(selectors.exception_comments(obj))


class AssignIn(Schema):
    owner_id: int | None = Field(description="A staff member who may reconcile; null: nobody.")


class CommentIn(Schema):
    body: MultilineText = Field(description="Up to 2000 characters.")


class StateIn(Schema):
    state: Literal["open", "investigating", "resolved"]
    reason: Text = Field("", description="Required to resolve.")


class ReasonIn(Schema):
    reason: Text = Field(description="What explains the difference (required).")


def _environment(request: HttpRequest, name: str | None) -> Any:
    return api_environment(request, name) if name else None


def _run(request: HttpRequest, run_id: int) -> ReconciliationRun:
    return selectors.run_get(user=acting_staff(request), pk=run_id)


def _item(request: HttpRequest, exception_id: int) -> ReconciliationException:
    return selectors.exception_get(user=acting_staff(request), pk=exception_id)


@router.get("/runs", response={200: RunPage, **ERROR_RESPONSES}, summary="List runs")
@needs(roles.BOOKS_VIEW)
def list_runs(
    request: HttpRequest,
    environment: str | None = EnvironmentName,
    page: int = PageNumber,
    page_size: int = PageSize,
) -> dict[str, object]:
    runs = selectors.run_list(
        user=acting_staff(request), environment=_environment(request, environment)
    )
    return paginate(runs, page=page, page_size=page_size)


@router.post(
    "/runs",
    response={201: RunOut, 409: ErrorOut, **ERROR_RESPONSES},
    summary="Start a run",
)
@needs(roles.RECONCILE)
def start_run(
    request: HttpRequest, payload: RunIn, environment: str | None = EnvironmentName
) -> Status[ReconciliationRun]:
    """Runs in the background: read its progress with GET /reconciliation/runs/{run_id}."""
    env = api_environment(request, environment)
    account = None
    if payload.virtual_account_id is not None:
        account = VirtualAccount.objects.filter(
            environment=env, pk=payload.virtual_account_id
        ).first()
        if account is None:
            raise ServiceError(
                gettext("No such virtual account in this environment."),
                errors=[
                    ("virtual_account_id", gettext("no such virtual account in this environment"))
                ],
            )
    run = engine.run_start(
        environment=env,
        virtual_account=account,
        window_start=payload.window_start,
        window_end=payload.window_end,
        by=acting_staff(request),
    )
    return Status(201, ReconciliationRun.objects.get(pk=run.pk))


@router.get("/runs/{run_id}", response={200: RunOut, **ERROR_RESPONSES}, summary="Read a run")
@needs(roles.BOOKS_VIEW)
def get_run(request: HttpRequest, run_id: int) -> ReconciliationRun:
    return _run(request, run_id)


@router.get(
    "/exceptions", response={200: ExceptionPage, **ERROR_RESPONSES}, summary="The exceptions queue"
)
@needs(roles.BOOKS_VIEW)
def list_exceptions(
    request: HttpRequest,
    environment: str | None = EnvironmentName,
    state: Literal["open", "investigating", "resolved", "unresolved"] | None = None,
    kind: KindName | None = None,
    owner_id: int | None = None,
    run_id: int | None = None,
    sort: Literal[
        "created", "-created", "updated", "-updated", "kind", "-kind", "difference", "-difference"
    ] = "-created",
    page: int = PageNumber,
    page_size: int = PageSize,
) -> dict[str, object]:
    items = selectors.exception_list(
        user=acting_staff(request),
        environment=_environment(request, environment),
        state=state or "",
        kind=kind or "",
        owner_id=owner_id,
        run_id=run_id,
        sort=sort,
    )
    return paginate(items, page=page, page_size=page_size)


@router.get(
    "/exceptions/{exception_id}",
    response={200: ExceptionDetailOut, **ERROR_RESPONSES},
    summary="Read an exception, with its comments",
)
@needs(roles.BOOKS_VIEW)
def get_exception(request: HttpRequest, exception_id: int) -> ReconciliationException:
    return _item(request, exception_id)


def _acted(request: HttpRequest, exception_id: int) -> ReconciliationException:
    return selectors.exception_get(user=acting_staff(request), pk=exception_id)


ACTION_RESPONSES: dict[int, Any] = {
    200: ExceptionDetailOut,
    409: ErrorOut,
    502: ErrorOut,
    **ERROR_RESPONSES,
}


@router.post("/exceptions/{exception_id}/assign", response=ACTION_RESPONSES, summary="Assign")
@needs(roles.RECONCILE)
def assign_exception(
    request: HttpRequest, exception_id: int, payload: AssignIn
) -> ReconciliationException:
    owner = None
    if payload.owner_id is not None:
        owner = StaffUser.objects.filter(pk=payload.owner_id, is_active=True).first()
        if owner is None:
            raise ServiceError(
                gettext("No such staff member."), errors=[("owner_id", gettext("no such staff"))]
            )
    exception_actions.exception_assign(
        item=_item(request, exception_id), owner=owner, by=acting_staff(request)
    )
    return _acted(request, exception_id)


@router.post("/exceptions/{exception_id}/comments", response=ACTION_RESPONSES, summary="Comment")
@needs(roles.RECONCILE)
def comment_exception(
    request: HttpRequest, exception_id: int, payload: CommentIn
) -> ReconciliationException:
    exception_actions.exception_comment(
        item=_item(request, exception_id), body=payload.body, by=acting_staff(request)
    )
    return _acted(request, exception_id)


@router.post("/exceptions/{exception_id}/state", response=ACTION_RESPONSES, summary="Set state")
@needs(roles.RECONCILE)
def set_exception_state(
    request: HttpRequest, exception_id: int, payload: StateIn
) -> ReconciliationException:
    exception_actions.exception_set_state(
        item=_item(request, exception_id),
        state=payload.state,
        reason=payload.reason,
        by=acting_staff(request),
    )
    return _acted(request, exception_id)


@router.post(
    "/exceptions/{exception_id}/adopt",
    response=ACTION_RESPONSES,
    summary="Adopt an upstream payout PayOps does not know",
)
@needs(roles.RECONCILE)
def adopt_exception(request: HttpRequest, exception_id: int) -> ReconciliationException:
    exception_actions.exception_adopt(item=_item(request, exception_id), by=acting_staff(request))
    return _acted(request, exception_id)


@router.post(
    "/exceptions/{exception_id}/refetch",
    response=ACTION_RESPONSES,
    summary="Fetch the payout again and apply it",
)
@needs(roles.RECONCILE)
def refetch_exception(request: HttpRequest, exception_id: int) -> ReconciliationException:
    exception_actions.exception_refetch(item=_item(request, exception_id), by=acting_staff(request))
    return _acted(request, exception_id)


@router.post(
    "/exceptions/{exception_id}/explain",
    response=ACTION_RESPONSES,
    summary="Mark as explained (a balance: record the adjustment)",
)
@needs(roles.RECONCILE)
def explain_exception(
    request: HttpRequest, exception_id: int, payload: ReasonIn
) -> ReconciliationException:
    exception_actions.exception_explain(
        item=_item(request, exception_id), reason=payload.reason, by=acting_staff(request)
    )
    return _acted(request, exception_id)
