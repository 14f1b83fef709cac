"""Payout endpoints (/api/v1/payouts): drafts, preview, documents, submission; same services."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Model
from django.http import HttpRequest
from ninja import Field, File, Form, Router, Schema
from ninja.files import UploadedFile
from ninja.params.functions import Query as QueryParam

from accounts.models import Recipient, VirtualAccount
from config.api_support import ERROR_RESPONSES, EnvironmentName, ErrorOut
from gateway.models import Environment
from payouts import selectors
from payouts.api_support import (
    UpstreamWaitOut,
    error,
    find_payout,
    forbidden,
    invalid,
    not_found,
    payout_action,
    upstream_wait_out,
)
from payouts.models import DocumentKind, Payout, PayoutDocument
from payouts.services import (
    DraftValues,
    PayoutInvalid,
    document_add,
    payout_draft_create,
    payout_draft_delete,
    payout_draft_update,
    payout_preview,
    payout_submit,
)
from quotes.api import environment_of, staff_of
from quotes.models import Quote

router = Router(tags=["payouts"])

ERRORS: dict[int, Any] = {**ERROR_RESPONSES, 409: ErrorOut}


class ClientMarkupIn(Schema):
    fixed_fee: Decimal | None = Field(None, description="USD, added to the fixed fee.")
    percentage_fee: Decimal | None = Field(None, description="Fraction: 0.01 is 1 %.")
    fx_markup: Decimal | None = Field(None, description="Fraction of the rate.")


class PaymentInstructionsIn(Schema):
    currency: str = Field(description="Stablecoin funding a crypto payout: USDC or USDT.")
    network: str = Field(description="Its network (valid_networks of the stablecoin).")


class DraftIn(Schema):
    virtual_account_id: str = Field(description="PayOps id or upstream id of an active account.")
    recipient_id: str = Field(description="PayOps id or upstream id of a WIRE/SWIFT recipient.")
    amount: Decimal | None = Field(
        None, description="USD, > 0, ≤ 999999.99, 2 decimals; omitted: the quote's base amount."
    )
    quote_id: str | None = Field(None, description="PayOps id or upstream id of an active quote.")
    reference: str = Field("", max_length=100)
    memo: str = Field("", max_length=255)
    internal_notes: str = Field("", max_length=1000)
    client_markup: ClientMarkupIn | None = Field(None, description="Only without a quote.")
    payment_instructions: PaymentInstructionsIn | None = Field(
        None, description="Required for a crypto virtual account, absent for a fiat one."
    )


class DraftPatch(Schema):
    virtual_account_id: str | None = None
    recipient_id: str | None = None
    amount: Decimal | None = None
    quote_id: str | None = Field(None, description="'' removes the quote.")
    reference: str | None = Field(None, max_length=100)
    memo: str | None = Field(None, max_length=255)
    internal_notes: str | None = Field(None, max_length=1000)
    client_markup: ClientMarkupIn | None = None
    payment_instructions: PaymentInstructionsIn | None = None


class PreviewIn(Schema):
    reserve: bool = Field(False, description="Reserve the previewed price as a 15-minute quote.")


class SubmitIn(Schema):
    confirm_duplicate: bool = Field(
        False,
        description="Submit although an identical payout (account, recipient, amount) is pending.",
    )


class TimelineOut(Schema):
    at: datetime
    from_status: str
    to_status: str
    source: str = Field(description="staff, event, poll or system.")
    by: str | None
    reason: str


class DocumentOut(Schema):
    id: int
    kind: str
    file_name: str
    content_type: str = Field(description="Detected from the content, not the name.")
    size: int
    sha256: str
    uploaded_by: str
    uploaded_at: datetime


class PreviewOut(Schema):
    total_fees: Decimal | None
    fees: dict[str, Any]
    currency: str
    recipient_amount: Decimal | None
    recipient_currency: str
    previewed_at: datetime | None
    reserved_quote_id: str
    reserved_until: datetime | None
    reservation_status: str = Field(description="'', ACTIVE, EXPIRED or USED.")


class PayoutOut(Schema):
    id: int
    status: str
    mode: str = Field(description="fiat or crypto, following the virtual account.")
    maker: str
    virtual_account_id: str
    recipient_id: str
    amount: Decimal
    currency: str
    quote_id: str | None
    reference: str
    memo: str
    internal_notes: str
    client_markup: dict[str, str] | None
    payment_instructions: dict[str, str] | None
    preview: PreviewOut
    upstream_id: str | None
    upstream_wait: UpstreamWaitOut | None = Field(
        description="While `submitting`: why the initiation waits to be sent again, and when."
    )
    created_at: datetime
    updated_at: datetime
    submitted_at: datetime | None
    documents: list[DocumentOut]
    timeline: list[TimelineOut]


def payout_out(payout: Payout) -> dict[str, Any]:
    return {
        "id": payout.pk,
        "status": payout.status,
        "mode": payout.mode,
        "maker": payout.maker.email,
        "virtual_account_id": payout.virtual_account.upstream_id,
        "recipient_id": payout.recipient.upstream_id,
        "amount": payout.amount,
        "currency": payout.currency,
        "quote_id": payout.quote.upstream_id if payout.quote else None,
        "reference": payout.reference,
        "memo": payout.memo,
        "internal_notes": payout.internal_notes,
        "client_markup": payout.client_markup,
        "payment_instructions": payout.payment_instructions,
        "preview": {
            "total_fees": payout.preview_total_fees,
            "fees": payout.preview_fees,
            "currency": payout.currency,
            "recipient_amount": payout.preview_recipient_amount,
            "recipient_currency": payout.preview_recipient_currency,
            "previewed_at": payout.previewed_at,
            "reserved_quote_id": payout.preview_quote_id,
            "reserved_until": payout.preview_quote_expires_at,
            "reservation_status": payout.preview_quote_status,
        },
        "upstream_id": payout.upstream_id,
        "upstream_wait": upstream_wait_out(payout),
        "created_at": payout.created_at,
        "updated_at": payout.updated_at,
        "submitted_at": payout.submitted_at,
        "documents": [
            {
                "id": d.pk,
                "kind": d.kind,
                "file_name": d.file_name,
                "content_type": d.content_type,
                "size": d.size,
                "sha256": d.sha256,
                "uploaded_by": d.uploaded_by.email,
                "uploaded_at": d.uploaded_at,
            }
            for d in payout.documents.all()
        ],
        "timeline": [
            {
                "at": c.at,
                "from_status": c.from_status,
                "to_status": c.to_status,
                "source": c.source,
                "by": c.by.email if c.by else None,
                "reason": c.reason,
            }
            for c in payout.status_changes.all()
        ],
    }


class _Missing(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _lookup[M: Model](model: type[M], environment: Environment | None, value: str, field: str) -> M:
    """A record of the environment by PayOps id (digits) or by upstream id."""
    queryset = model._default_manager.filter(environment=environment)
    found = (
        queryset.filter(pk=int(value)).first()
        if value.isdigit()
        else queryset.filter(upstream_id=value).first()
    )
    if found is None:
        raise _Missing(field, f"No {field.removesuffix('_id').replace('_', ' ')} {value!r} here.")
    return found


def _values(payload: DraftIn | DraftPatch, environment: Environment | None) -> DraftValues:
    values = DraftValues()
    if payload.virtual_account_id is not None:
        values.virtual_account = _lookup(
            VirtualAccount, environment, payload.virtual_account_id, "virtual_account_id"
        )
    if payload.recipient_id is not None:
        values.recipient = _lookup(Recipient, environment, payload.recipient_id, "recipient_id")
    values.amount = payload.amount
    if payload.quote_id == "":
        values.clear_quote = True
    elif payload.quote_id is not None:
        values.quote = _lookup(Quote, environment, payload.quote_id, "quote_id")
    values.reference = payload.reference
    values.memo = payload.memo
    values.internal_notes = payload.internal_notes
    if payload.client_markup is not None:
        values.client_markup = payload.client_markup.dict()
    if payload.payment_instructions is not None:
        values.payment_currency = payload.payment_instructions.currency
        values.payment_network = payload.payment_instructions.network
    elif isinstance(payload, DraftIn):
        values.payment_currency = values.payment_network = ""
    return values


def _answer_fresh(
    request: HttpRequest, payout_id: int, environment: str | None
) -> Callable[[object, Payout], tuple[int, Any]]:
    """200 with the payout as it now stands, re-read with its documents and timeline."""

    def respond(_result: object, payout: Payout) -> tuple[int, Any]:
        return 200, payout_out(find_payout(request, payout_id, environment) or payout)

    return respond


@router.post("/payouts", response={201: PayoutOut, **ERRORS})
def create_payout(
    request: HttpRequest, payload: DraftIn, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """Save a payout draft (finance makers). Nothing is sent upstream before approval."""
    user = staff_of(request)
    where = environment_of(request, environment)
    try:
        payout = payout_draft_create(by=user, environment=where, values=_values(payload, where))
    except _Missing as exc:
        return 400, error("validation_error", str(exc), {exc.field: [str(exc)]})
    except PermissionDenied as exc:
        return forbidden(exc)
    except PayoutInvalid as exc:
        return invalid(exc)
    found = find_payout(request, payout.pk, environment)
    return 201, payout_out(found or payout)


@router.get("/payouts", response={200: list[PayoutOut], **ERROR_RESPONSES})
def list_payouts(
    request: HttpRequest,
    status: str = "",
    corridor: str = QueryParam("", description="SOURCE-RAIL, e.g. USD-WIRE."),
    amount_min: Decimal | None = None,
    amount_max: Decimal | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
    limit: int = QueryParam(50, ge=1, le=200),
    offset: int = QueryParam(0, ge=0),
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Payouts of the environment, newest first, with their documents and timelines."""
    user = staff_of(request)
    if not selectors.can_read_payouts(user):
        return 403, error("permission_denied", "Not allowed.")
    payouts = selectors.payout_list(
        environment=environment_of(request, environment),
        status=status,
        corridor=corridor,
        amount_min=amount_min,
        amount_max=amount_max,
        date_from=date_from,
        date_to=date_to,
    ).prefetch_related("documents__uploaded_by", "status_changes__by")
    return 200, [payout_out(p) for p in payouts[offset : offset + limit]]


@router.get("/payouts/{payout_id}", response={200: PayoutOut, **ERROR_RESPONSES})
def get_payout(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    user = staff_of(request)
    if not selectors.can_read_payouts(user):
        return 403, error("permission_denied", "Not allowed.")
    payout = find_payout(request, payout_id, environment)
    return (200, payout_out(payout)) if payout else not_found()


@router.patch("/payouts/{payout_id}", response={200: PayoutOut, **ERRORS})
def update_payout(
    request: HttpRequest,
    payout_id: int,
    payload: DraftPatch,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Edit a draft (its maker only); a priced change drops the stale preview."""
    user = staff_of(request)
    payout = find_payout(request, payout_id, environment)
    if payout is None:
        return not_found()
    try:
        payout_draft_update(
            by=user, payout=payout, values=_values(payload, environment_of(request, environment))
        )
    except _Missing as exc:
        return 400, error("validation_error", str(exc), {exc.field: [str(exc)]})
    except PermissionDenied as exc:
        return forbidden(exc)
    except PayoutInvalid as exc:
        return invalid(exc)
    return 200, payout_out(find_payout(request, payout_id, environment) or payout)


@router.delete("/payouts/{payout_id}", response={204: None, **ERRORS})
def delete_payout(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    return payout_action(
        request,
        payout_id,
        environment,
        lambda user, payout: payout_draft_delete(by=user, payout=payout),
        lambda _result, _payout: (204, None),
    )


@router.post("/payouts/{payout_id}/preview", response={200: PayoutOut, **ERRORS})
def preview_payout(
    request: HttpRequest,
    payout_id: int,
    payload: PreviewIn,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """The upstream's payout preview: fees and what the recipient gets; optionally reserved."""
    return payout_action(
        request,
        payout_id,
        environment,
        lambda user, payout: payout_preview(by=user, payout=payout, reserve=payload.reserve),
        _answer_fresh(request, payout_id, environment),
    )


@router.post("/payouts/{payout_id}/documents", response={201: DocumentOut, **ERRORS})
def add_document(
    request: HttpRequest,
    payout_id: int,
    file: File[UploadedFile],
    kind: Form[str] = DocumentKind.INVOICE,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Upload a supporting document (multipart `file`, optional `kind`): checked by content."""

    def respond(document: PayoutDocument, _payout: Payout) -> tuple[int, Any]:
        return 201, {
            "id": document.pk,
            "kind": document.kind,
            "file_name": document.file_name,
            "content_type": document.content_type,
            "size": document.size,
            "sha256": document.sha256,
            "uploaded_by": staff_of(request).email,
            "uploaded_at": document.uploaded_at,
        }

    return payout_action(
        request,
        payout_id,
        environment,
        lambda user, payout: document_add(by=user, payout=payout, upload=file, kind=kind),
        respond,
    )


@router.post("/payouts/{payout_id}/submit", response={200: PayoutOut, **ERRORS})
def submit_payout(
    request: HttpRequest,
    payout_id: int,
    payload: SubmitIn,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Send a draft for approval after every check again; says exactly what is missing."""
    return payout_action(
        request,
        payout_id,
        environment,
        lambda user, payout: payout_submit(
            by=user, payout=payout, confirm_duplicate=payload.confirm_duplicate
        ),
        _answer_fresh(request, payout_id, environment),
    )
