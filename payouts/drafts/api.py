"""Payout endpoints (/api/v1/payouts): list, read, drafts, preview, documents, send for approval."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Model
from django.http import FileResponse, HttpRequest
from django.utils.translation import gettext
from ninja import Field, File, Form, Router, Schema
from ninja.files import UploadedFile
from ninja.params.functions import Query as QueryParam

from accounts.models import Recipient, VirtualAccount
from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES, ErrorOut, Limit, Offset
from console.inputs import Amount, MultilineText, Text
from gateway.api_support import EnvironmentName
from gateway.models import Environment
from payouts import selectors
from payouts.api_out import DocumentOut, PayoutOut, document_out, payout_out
from payouts.api_support import payout_action, payout_found, payout_fresh
from payouts.drafts.documents import document_add, document_open
from payouts.drafts.preview import payout_preview
from payouts.drafts.services import (
    DraftValues,
    payout_draft_create,
    payout_draft_delete,
    payout_draft_update,
    payout_send_for_approval,
)
from payouts.models import DocumentKind, PayoutChannel
from payouts.pages import document_file_response
from quotes.api import environment_of, staff_of
from quotes.models import Quote
from staff import roles
from staff.errors import ServiceError

router = Router(tags=["payouts"])


def _require_reader(request: HttpRequest) -> None:
    if not selectors.can_read_payouts(staff_of(request)):
        raise PermissionDenied(gettext("Not allowed."))


ERRORS: dict[int, Any] = {**ERROR_RESPONSES, 409: ErrorOut}
SEARCH_HELP = (
    "Words found in the reference, the upstream id or the recipient's name (every word must "
    "match), or an exact amount: `539` and `539.00` find the same payouts."
)
# `?amount=`: one payout amount, exactly (the same Decimal rules as the amount of a draft).
PayoutSearch = QueryParam("", max_length=selectors.SEARCH_MAX_LENGTH, description=SEARCH_HELP)
PayoutCorridor = QueryParam("", description="SOURCE-RAIL, e.g. USD-WIRE.")
AMOUNT_EXACT = QueryParam(
    None, ge=0, max_digits=12, decimal_places=2, description="Exactly this amount (USD)."
)


class ClientMarkupIn(Schema):
    fixed_fee: Amount | None = Field(None, description="USD, added to the fixed fee.")
    percentage_fee: Amount | None = Field(None, description="Fraction: 0.01 is 1 %.")
    fx_markup: Amount | None = Field(None, description="Fraction of the rate.")


class PaymentInstructionsIn(Schema):
    currency: Text = Field(description="Stablecoin funding a crypto payout: USDC or USDT.")
    network: Text = Field(description="Its network (valid_networks of the stablecoin).")


class DraftIn(Schema):
    virtual_account_id: Text = Field(description="PayOps id or upstream id of an active account.")
    recipient_id: Text = Field(description="PayOps id or upstream id of a WIRE/SWIFT recipient.")
    amount: Amount | None = Field(
        None, description="USD, > 0, ≤ 999999.99, 2 decimals; omitted: the quote's base amount."
    )
    quote_id: Text | None = Field(None, description="PayOps id or upstream id of an active quote.")
    reference: Text = Field("", max_length=100)
    memo: Text = Field("", max_length=255)
    internal_notes: MultilineText = Field("", max_length=1000)
    client_markup: ClientMarkupIn | None = Field(None, description="Only without a quote.")
    payment_instructions: PaymentInstructionsIn | None = Field(
        None, description="Required for a crypto virtual account, absent for a fiat one."
    )


class DraftPatch(Schema):
    virtual_account_id: Text | None = None
    recipient_id: Text | None = None
    amount: Amount | None = None
    quote_id: Text | None = Field(None, description="'' removes the quote.")
    reference: Text | None = Field(None, max_length=100)
    memo: Text | None = Field(None, max_length=255)
    internal_notes: MultilineText | None = Field(None, max_length=1000)
    client_markup: ClientMarkupIn | None = None
    payment_instructions: PaymentInstructionsIn | None = None


class PreviewIn(Schema):
    reserve: bool = Field(False, description="Reserve the previewed price as a 15-minute quote.")


class SubmitIn(Schema):
    confirm_duplicate: bool = Field(
        False,
        description="Submit although an identical payout (account, recipient, amount) is pending.",
    )


def _lookup[M: Model](model: type[M], environment: Environment | None, value: str, field: str) -> M:
    """A record of the environment by PayOps id (digits) or by upstream id."""
    queryset = model._default_manager.filter(environment=environment)
    found = (
        queryset.filter(pk=int(value)).first()
        if value.isascii() and value.isdigit()
        else queryset.filter(upstream_id=value).first()
    )
    if found is None:
        message = gettext("No %(what)s %(value)r here.") % {
            "what": field.removesuffix("_id").replace("_", " "),
            "value": value,
        }
        raise ServiceError(message, errors=[(field, message)])
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


@router.post(
    "/payouts", response={201: PayoutOut, **ERRORS}, operation_id="payouts_api_create_payout"
)
@needs(roles.PAYOUT_INITIATE)
def create_payout(
    request: HttpRequest, payload: DraftIn, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """Save a payout draft (finance makers). Nothing is sent upstream before approval."""
    user = staff_of(request)
    where = environment_of(request, environment)
    payout = payout_draft_create(
        by=user, environment=where, values=_values(payload, where), channel=PayoutChannel.API
    )
    return 201, payout_fresh(request, payout.pk, environment)


@router.get(
    "/payouts",
    response={200: list[PayoutOut], **ERROR_RESPONSES},
    operation_id="payouts_api_list_payouts",
)
@needs(roles.FINANCE_VIEW, roles.COMPLIANCE_VIEW)
def list_payouts(
    request: HttpRequest,
    q: Text = PayoutSearch,
    amount: Decimal | None = AMOUNT_EXACT,
    status: str = "",
    corridor: Text = PayoutCorridor,
    amount_min: Decimal | None = None,
    amount_max: Decimal | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
    limit: int = Limit,
    offset: int = Offset,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Payouts of the environment, newest first, with their documents and timelines; searched
    and filtered as the Payouts page does (the same selector)."""
    _require_reader(request)
    payouts = selectors.payout_list(
        environment=environment_of(request, environment),
        q=q,
        amount=amount,
        status=status,
        corridor=corridor,
        amount_min=amount_min,
        amount_max=amount_max,
        date_from=date_from,
        date_to=date_to,
    ).prefetch_related("documents__uploaded_by", "status_changes__by")
    return 200, [payout_out(p) for p in payouts[offset : offset + limit]]


@router.get(
    "/payouts/{payout_id}",
    response={200: PayoutOut, **ERROR_RESPONSES},
    operation_id="payouts_api_get_payout",
)
@needs(roles.FINANCE_VIEW, roles.COMPLIANCE_VIEW)
def get_payout(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    _require_reader(request)
    return 200, payout_fresh(request, payout_id, environment)


@router.patch(
    "/payouts/{payout_id}",
    response={200: PayoutOut, **ERRORS},
    operation_id="payouts_api_update_payout",
)
@needs(roles.PAYOUT_INITIATE)
def update_payout(
    request: HttpRequest,
    payout_id: int,
    payload: DraftPatch,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Edit a draft (its maker only); a priced change drops the stale preview."""
    user = staff_of(request)
    payout = payout_found(request, payout_id, environment)
    payout_draft_update(
        by=user, payout=payout, values=_values(payload, environment_of(request, environment))
    )
    return 200, payout_fresh(request, payout_id, environment)


@router.delete(
    "/payouts/{payout_id}", response={204: None, **ERRORS}, operation_id="payouts_api_delete_payout"
)
@needs(roles.PAYOUT_INITIATE)
def delete_payout(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    payout_action(request, payout_id, environment, payout_draft_delete)
    return 204, None


@router.post(
    "/payouts/{payout_id}/preview",
    response={200: PayoutOut, **ERRORS},
    operation_id="payouts_api_preview_payout",
)
@needs(roles.PAYOUT_INITIATE)
def preview_payout(
    request: HttpRequest,
    payout_id: int,
    payload: PreviewIn,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """The upstream's payout preview: fees and what the recipient gets; optionally reserved."""
    payout_action(request, payout_id, environment, payout_preview, reserve=payload.reserve)
    return 200, payout_fresh(request, payout_id, environment)


@router.post(
    "/payouts/{payout_id}/documents",
    response={201: DocumentOut, **ERRORS},
    operation_id="payouts_api_add_document",
)
@needs(roles.PAYOUT_INITIATE)
def add_document(
    request: HttpRequest,
    payout_id: int,
    file: File[UploadedFile],
    kind: Form[str] = DocumentKind.INVOICE,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Upload a supporting document (multipart `file`, optional `kind`): checked by content."""
    user = staff_of(request)
    payout = payout_found(request, payout_id, environment)
    document = document_add(by=user, payout=payout, upload=file, kind=kind)
    return 201, document_out(document, uploaded_by=user.email)


@router.post(
    "/payouts/{payout_id}/submit",
    response={200: PayoutOut, **ERRORS},
    operation_id="payouts_api_submit_payout",
)
@needs(roles.PAYOUT_INITIATE)
def submit_payout(
    request: HttpRequest,
    payout_id: int,
    payload: SubmitIn,
    environment: str | None = EnvironmentName,
) -> tuple[int, Any]:
    """Send a draft for approval after every check again; says exactly what is missing."""
    payout_action(
        request,
        payout_id,
        environment,
        payout_send_for_approval,
        confirm_duplicate=payload.confirm_duplicate,
        channel=PayoutChannel.API,
    )
    return 200, payout_fresh(request, payout_id, environment)


class DocumentReadOut(DocumentOut):
    opened_by: list[str] = Field(description="Who opened it (emails), first opening first.")
    content_url: str = Field(
        description="Where its bytes are (an attachment; opening is recorded)."
    )


@router.get(
    "/payouts/{payout_id}/documents",
    response={200: list[DocumentReadOut], **ERROR_RESPONSES},
    operation_id="payouts_api_list_documents",
)
@needs(roles.FINANCE_VIEW, roles.COMPLIANCE_VIEW)
def list_documents(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> tuple[int, Any]:
    """The payout's supporting documents, for whoever may read the payout: name, type, size,
    SHA-256, and who opened each (approvers should open them before approving)."""
    _require_reader(request)
    payout = payout_found(request, payout_id, environment)
    suffix = f"?environment={environment}" if environment else ""
    return 200, [
        {
            **document_out(document),
            "opened_by": [view.viewer.email for view in document.views.all()],
            "content_url": f"/api/v1/payouts/{payout.pk}/documents/{document.pk}/content{suffix}",
        }
        for document in payout.documents.all()
    ]


@router.get(
    "/payouts/{payout_id}/documents/{document_id}/content",
    response=ERROR_RESPONSES,
    operation_id="payouts_api_download_document",
    openapi_extra={
        "responses": {
            "200": {
                "description": "The document's bytes as an attachment, with the type its content "
                "showed; recorded as opened by the caller (and audited).",
                "content": {t: {} for t in ("application/pdf", "image/png", "image/jpeg")},
            }
        }
    },
)
@needs(roles.FINANCE_VIEW, roles.COMPLIANCE_VIEW)
def download_document(
    request: HttpRequest,
    payout_id: int,
    document_id: int,
    environment: str | None = EnvironmentName,
) -> FileResponse:
    """Download one supporting document (the opening is recorded, as on the payout page)."""
    _require_reader(request)
    payout = payout_found(request, payout_id, environment)
    document = document_open(by=staff_of(request), payout=payout, document_pk=document_id)
    return document_file_response(document)
