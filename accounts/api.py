"""The virtual-account and recipient endpoints of /api/v1."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from django.http import Http404, HttpRequest
from django.utils.translation import gettext
from ninja import Field, Query, Router, Schema, Status

from accounts import recipient_control, recipients, selectors, virtual_accounts
from accounts.models import Recipient, RecipientChange, VirtualAccount
from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES, ErrorOut, PageNumber, PageOut, PageSize
from console.inputs import Text
from gateway.api_support import EnvironmentName, acting_staff, api_environment, request_key
from staff import roles
from staff.errors import ServiceError
from users.api import readable, readable_page, submission_key
from users.models import EndUser
from users.selectors import end_user_get

router = Router(tags=["accounts"])


def _end_user(request: HttpRequest, environment: str | None, end_user_id: int) -> EndUser:
    try:
        return end_user_get(environment=api_environment(request, environment), pk=end_user_id)
    except Http404:
        raise ServiceError(
            gettext("No end user with this id in this environment."),
            errors=[("end_user_id", gettext("no such end user in this environment"))],
        ) from None


def _created_for_end_user[T](
    request: HttpRequest,
    environment: str | None,
    end_user_id: int,
    idempotency_key: str | None,
    create: Callable[..., T],
    **values: Any,
) -> Status[T]:
    """201 with what `create`, a service, made for the end user `end_user_id` names (400 on that
    field when there is none in the request's environment), by the caller, with `values` and the
    request's Idempotency-Key."""
    end_user = _end_user(request, environment, end_user_id)
    made = create(
        end_user=end_user,
        by=acting_staff(request),
        request_key=request_key(idempotency_key),
        **values,
    )
    return Status(201, made)


# --- virtual accounts ------------------------------------------------------------------------


class VirtualAccountIn(Schema):
    end_user_id: int = Field(description="PayOps id of a verified end user.")
    mode: Literal["fiat", "crypto"] = Field(
        description="`fiat` debits the balance; `crypto` funds each payout by a stablecoin deposit."
    )


class VirtualAccountOut(Schema):
    id: int = Field(description="PayOps id (use it in paths).")
    upstream_id: str = Field(description="The upstream's virtual account id.")
    environment: str
    end_user_id: int
    end_user_upstream_id: str
    mode: str
    type: str = Field(description="`US_BANK`.")
    bank: str
    status: str = Field(description="`activating`, `active`, `failed`, `frozen`, `deactivated`.")
    account_number: str = Field(description="Set once active.")
    routing_number: str = Field(description="Set once active.")
    available_balance: Decimal | None = Field(
        description='Exact decimal as a string, e.g. "1500.25"; null until first read.'
    )
    currency: str
    balance_as_of: datetime | None = Field(description="When the upstream reported that balance.")
    activated_at: datetime | None
    created_at: datetime

    @staticmethod
    def resolve_environment(obj: VirtualAccount) -> str:
        return obj.environment.name

    @staticmethod
    def resolve_end_user_upstream_id(obj: VirtualAccount) -> str:
        return obj.end_user.upstream_id


class VirtualAccountPage(PageOut[VirtualAccountOut]):
    pass


@router.post(
    "/virtual-accounts",
    response={201: VirtualAccountOut, 409: ErrorOut, 502: ErrorOut, **ERROR_RESPONSES},
    summary="Open a virtual account",
)
@needs(roles.ACCOUNTS_MANAGE)
def create_virtual_account(
    request: HttpRequest,
    payload: VirtualAccountIn,
    environment: str | None = EnvironmentName,
    idempotency_key: str | None = submission_key("account"),
) -> Status[VirtualAccount]:
    """Only for verified end users (400 `end_user_not_verified` on `end_user_id` otherwise)."""
    return _created_for_end_user(
        request,
        environment,
        payload.end_user_id,
        idempotency_key,
        virtual_accounts.virtual_account_create,
        mode=payload.mode,
    )


@router.get(
    "/virtual-accounts",
    response={200: VirtualAccountPage, **ERROR_RESPONSES},
    summary="List virtual accounts",
)
@needs(roles.DIRECTORY_VIEW)
def list_virtual_accounts(
    request: HttpRequest,
    environment: str | None = EnvironmentName,
    status: Literal["activating", "active", "failed", "frozen", "deactivated"] | None = None,
    mode: Literal["fiat", "crypto"] | None = None,
    end_user_id: int | None = None,
    page: int = PageNumber,
    page_size: int = PageSize,
) -> dict[str, object]:
    return readable_page(
        request,
        environment,
        selectors.virtual_account_list,
        page=page,
        page_size=page_size,
        status=status or "",
        mode=mode or "",
        end_user_id=end_user_id,
    )


@router.get("/virtual-accounts/{id}", response={200: VirtualAccountOut, **ERROR_RESPONSES})
@needs(roles.DIRECTORY_VIEW)
def get_virtual_account(
    request: HttpRequest, id: int, environment: str | None = EnvironmentName
) -> VirtualAccount:
    return readable(request, environment, selectors.virtual_account_get, id)


@router.post(
    "/virtual-accounts/{id}/refresh",
    response={200: VirtualAccountOut, 502: ErrorOut, **ERROR_RESPONSES},
    summary="Refresh status and balance from the upstream",
)
@needs(roles.DIRECTORY_VIEW)
def refresh_virtual_account(
    request: HttpRequest, id: int, environment: str | None = EnvironmentName
) -> VirtualAccount:
    va = readable(request, environment, selectors.virtual_account_get, id)
    return virtual_accounts.virtual_account_refresh(virtual_account=va, by=acting_staff(request))


# --- recipients ------------------------------------------------------------------------------


class AddressIn(Schema):
    street_name: Text = Field(description="Street and number.")
    city: Text
    state: Text = ""
    postal_code: Text = ""
    country: Text = Field(description="ISO 3166-1 alpha-2.", examples=["US"])


class BankAccountIn(Schema):
    account_type: Literal["WIRE", "SWIFT"]
    account_number: Text = Field(
        description="WIRE: the US account number. SWIFT: the IBAN where the bank's country uses "
        "one (checked), else the account number."
    )
    routing_number: Text = Field("", description="WIRE: ABA routing number (checksum verified).")
    swift_code: Text = Field("", description="SWIFT: the bank's BIC (8 or 11 characters).")
    bank_name: Text = ""


class RecipientIn(Schema):
    """decisions.md's recipient body, with `end_user_id` (PayOps id) in place of `user_id`."""

    end_user_id: int = Field(description="PayOps id of the end user this recipient belongs to.")
    first_name: Text = Field("", description="Individual recipients: given name.")
    last_name: Text = Field("", description="Individual recipients: family name.")
    company_name: Text = Field("", description="Company recipients: instead of the names.")
    email: Text = ""
    address: AddressIn
    account: BankAccountIn


class AddressOut(Schema):
    street_name: str
    city: str
    state: str
    postal_code: str
    country: str


class BankAccountOut(Schema):
    account_type: str
    account_number: str = Field(description="Masked: only the last four characters.")
    routing_number: str
    swift_code: str
    bank_name: str


class RecipientOut(Schema):
    id: int
    upstream_id: str = Field(description="The upstream's recipient_id.")
    environment: str
    end_user_id: int
    kind: str = Field(description="`individual` or `company`.")
    name: str
    first_name: str
    last_name: str
    company_name: str
    email: str
    address: AddressOut
    account: BankAccountOut
    created_by: str = Field(description="Email of the staff member who registered it.")
    created_at: datetime
    status: str = Field(
        description="Dual control: `pending_approval`, `approved` (the only payable one), "
        "`rejected`, `superseded` (an approved change replaced it) or `archived`."
    )
    approved_by: str | None = Field(
        description="Email of the second person who approved it (`migration` for recipients "
        "registered before dual control)."
    )
    approved_at: datetime | None
    supersedes_id: int | None = Field(description="The version this one replaced.")
    change_pending: bool = Field(description="A change of its details waits for approval.")

    @staticmethod
    def resolve_approved_by(obj: Recipient) -> str | None:
        if obj.approved_by is not None:
            return obj.approved_by.email
        return obj.approval_note or None

    @staticmethod
    def resolve_change_pending(obj: Recipient) -> bool:
        pending = getattr(obj, "pending_changes", None)
        if pending is not None:
            return bool(pending)
        return recipient_control.pending_change(obj) is not None

    @staticmethod
    def resolve_environment(obj: Recipient) -> str:
        return obj.environment.name

    @staticmethod
    def resolve_name(obj: Recipient) -> str:
        return obj.display_name

    @staticmethod
    def resolve_address(obj: Recipient) -> dict[str, str]:
        return {
            "street_name": obj.street_name,
            "city": obj.city,
            "state": obj.state,
            "postal_code": obj.postal_code,
            "country": obj.country,
        }

    @staticmethod
    def resolve_account(obj: Recipient) -> dict[str, str]:
        return {
            "account_type": obj.account_type,
            "account_number": obj.masked_account_number,
            "routing_number": obj.routing_number,
            "swift_code": obj.swift_code,
            "bank_name": obj.bank_name,
        }

    @staticmethod
    def resolve_created_by(obj: Recipient) -> str:
        return obj.created_by.email


RecipientStatusFilter = Literal[
    "pending", "pending_approval", "approved", "rejected", "superseded", "archived"
]
RecipientStatusQuery = Query(
    None,
    description="`pending`: the recipient or a change of it waits for approval; a status; "
    "none: those in use (not archived, not superseded).",
)
RecipientSearch = Query("", description="Name, company, email or upstream id.")


class RecipientPage(PageOut[RecipientOut]):
    pass


@router.post(
    "/recipients",
    response={201: RecipientOut, 409: ErrorOut, 502: ErrorOut, **ERROR_RESPONSES},
    summary="Register a recipient",
)
@needs(roles.ACCOUNTS_MANAGE)
def create_recipient(
    request: HttpRequest,
    payload: RecipientIn,
    environment: str | None = EnvironmentName,
    idempotency_key: str | None = submission_key("recipient"),
) -> Status[Recipient]:
    """Checked before sending (ABA checksum, BIC, IBAN); the upstream's field errors come back
    on the same field names (`account.routing_number`, `end_user_id`, ...)."""
    values = {
        "kind": "company" if payload.company_name.strip() else "individual",
        "first_name": payload.first_name,
        "last_name": payload.last_name,
        "company_name": payload.company_name,
        "email": payload.email,
        **payload.address.dict(),
        **payload.account.dict(),
    }
    return _created_for_end_user(
        request,
        environment,
        payload.end_user_id,
        idempotency_key,
        recipients.recipient_create,
        values=values,
    )


@router.get(
    "/recipients", response={200: RecipientPage, **ERROR_RESPONSES}, summary="List recipients"
)
@needs(roles.DIRECTORY_VIEW)
def list_recipients(
    request: HttpRequest,
    environment: str | None = EnvironmentName,
    end_user_id: int | None = None,
    account_type: Literal["WIRE", "SWIFT"] | None = None,
    status: RecipientStatusFilter | None = RecipientStatusQuery,
    search: Text = RecipientSearch,
    page: int = PageNumber,
    page_size: int = PageSize,
) -> dict[str, object]:
    return readable_page(
        request,
        environment,
        selectors.recipient_list,
        page=page,
        page_size=page_size,
        end_user_id=end_user_id,
        account_type=account_type or "",
        status=status or "",
        search=search,
    )


@router.get("/recipients/{id}", response={200: RecipientOut, **ERROR_RESPONSES})
@needs(roles.DIRECTORY_VIEW)
def get_recipient(
    request: HttpRequest, id: int, environment: str | None = EnvironmentName
) -> Recipient:
    return readable(request, environment, selectors.recipient_get, id)


# --- dual control ----------------------------------------------------------------------------


class ReasonIn(Schema):
    reason: Text = Field(description="Why (shown to the proposer and in the history).")


class ArchiveIn(Schema):
    reason: Text = ""


class AddressPatch(Schema):
    street_name: Text | None = None
    city: Text | None = None
    state: Text | None = None
    postal_code: Text | None = None
    country: Text | None = None


class BankAccountPatch(Schema):
    account_type: Literal["WIRE", "SWIFT"] | None = None
    account_number: Text | None = None
    routing_number: Text | None = None
    swift_code: Text | None = None
    bank_name: Text | None = None


class RecipientPatchIn(Schema):
    """Only the fields that change; the others keep their current values."""

    first_name: Text | None = None
    last_name: Text | None = None
    company_name: Text | None = None
    email: Text | None = None
    address: AddressPatch | None = None
    account: BankAccountPatch | None = None


class RecipientChangeOut(Schema):
    id: int
    recipient_id: int
    status: str = Field(description="`pending_approval`, `approved` or `rejected`.")
    proposed_by: str
    proposed_at: datetime
    before: dict[str, Any] = Field(description="The changed fields before (account masked).")
    after: dict[str, Any] = Field(description="The changed fields after (account masked).")

    @staticmethod
    def resolve_proposed_by(obj: RecipientChange) -> str:
        return obj.proposed_by.email


class VersionOut(Schema):
    version: int
    recipient_id: int
    upstream_id: str
    status: str
    registered_by: str | None
    registered_at: datetime
    approved_by: str | None
    approved_at: datetime | None
    rejected_by: str | None
    rejected_at: datetime | None
    rejection_reason: str
    archived_by: str | None
    archived_at: datetime | None
    details: dict[str, Any] = Field(description="Its fields, the account number masked.")


class ChangeHistoryOut(Schema):
    change_id: int
    recipient_id: int
    status: str
    proposed_by: str | None
    proposed_at: datetime
    decided_by: str | None
    decided_at: datetime | None
    reason: str
    before: dict[str, Any]
    after: dict[str, Any]
    new_recipient_id: int | None


class RecipientHistoryOut(Schema):
    versions: list[VersionOut]
    changes: list[ChangeHistoryOut]


def _recipient_of(request: HttpRequest, environment: str | None, id: int) -> Recipient:
    return selectors.recipient_get(environment=api_environment(request, environment), pk=id)


DECISION_RESPONSES = {200: RecipientOut, 409: ErrorOut, 502: ErrorOut, **ERROR_RESPONSES}


@router.post(
    "/recipients/{id}/approve",
    response=DECISION_RESPONSES,
    summary="Approve a recipient or its pending change",
)
@needs(roles.RECIPIENTS_APPROVE)
def approve_recipient(
    request: HttpRequest, id: int, environment: str | None = EnvironmentName
) -> Recipient:
    """Step-up; never by its creator nor the change's author; a role the policy names. A change
    is registered upstream as a new recipient, which is returned (the old one is superseded)."""
    return recipient_control.recipient_approve(
        recipient=_recipient_of(request, environment, id), by=acting_staff(request)
    )


@router.post(
    "/recipients/{id}/reject",
    response=DECISION_RESPONSES,
    summary="Reject a recipient or its pending change",
)
@needs(roles.RECIPIENTS_APPROVE)
def reject_recipient(
    request: HttpRequest, id: int, payload: ReasonIn, environment: str | None = EnvironmentName
) -> Recipient:
    return recipient_control.recipient_reject(
        recipient=_recipient_of(request, environment, id),
        by=acting_staff(request),
        reason=payload.reason,
    )


@router.post(
    "/recipients/{id}/archive",
    response={200: RecipientOut, 409: ErrorOut, **ERROR_RESPONSES},
    summary="Archive a recipient (no longer payable)",
)
@needs(roles.ACCOUNTS_MANAGE)
def archive_recipient(
    request: HttpRequest, id: int, payload: ArchiveIn, environment: str | None = EnvironmentName
) -> Recipient:
    return recipient_control.recipient_archive(
        recipient=_recipient_of(request, environment, id),
        by=acting_staff(request),
        reason=payload.reason,
    )


@router.patch(
    "/recipients/{id}",
    response={202: RecipientChangeOut, 409: ErrorOut, **ERROR_RESPONSES},
    summary="Propose a change of names, address or bank details",
)
@needs(roles.ACCOUNTS_MANAGE)
def patch_recipient(
    request: HttpRequest,
    id: int,
    payload: RecipientPatchIn,
    environment: str | None = EnvironmentName,
) -> Status[RecipientChange]:
    """202: the change waits for a second person's approval; the current details stay payable
    until then. Approved, it is registered upstream as a new recipient."""
    given = payload.dict(exclude_none=True)
    values = {
        **{k: v for k, v in given.items() if k not in ("address", "account")},
        **given.get("address", {}),
        **given.get("account", {}),
    }
    if payload.company_name is not None or payload.first_name is not None:
        values["kind"] = "company" if (payload.company_name or "").strip() else "individual"
    change = recipient_control.recipient_change_propose(
        recipient=_recipient_of(request, environment, id),
        by=acting_staff(request),
        values=values,
    )
    return Status(202, change)


@router.get(
    "/recipients/{id}/history",
    response={200: RecipientHistoryOut, **ERROR_RESPONSES},
    summary="Every version and change of a recipient",
)
@needs(roles.DIRECTORY_VIEW)
def recipient_history(
    request: HttpRequest, id: int, environment: str | None = EnvironmentName
) -> dict[str, Any]:
    return selectors.recipient_history(readable(request, environment, selectors.recipient_get, id))
