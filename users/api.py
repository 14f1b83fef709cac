"""The end-user endpoints of /api/v1: create, list, read, update, refresh, KYC review."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any, Literal

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Field, Header, Query, Router, Schema, Status

from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES, ErrorOut, PageNumber, PageOut, PageSize, paginate
from console.inputs import MultilineText, Text
from gateway.api_support import (
    EnvironmentName,
    acting_staff,
    api_environment,
    request_key,
    require_permission,
)
from staff import roles
from users import kyc, selectors, services
from users.models import EndUser, KycReview
from users.validation import reason_in_words

router = Router(tags=["end users"])


def submission_key(what: str) -> Any:
    """The `Idempotency-Key` header of a create: a double submit finds the first record."""
    return Header(
        None,
        alias="Idempotency-Key",
        description=f"A UUID of your choosing: the same key with the same body again returns "
        f"the same {what} instead of creating another (safe retries). Keys are yours alone, per "
        "environment. The same key with another body: 409 `idempotency_key_reused`; while the "
        "first request with the key is still being processed: 409 `idempotency_key_in_flight` "
        "(send it again shortly).",
    )


def readable[T](request: HttpRequest, environment: str | None, get: Callable[..., T], pk: int) -> T:
    """A directory record of the caller's environment that the caller may read (404 if none)."""
    require_permission(request, roles.DIRECTORY_VIEW)
    return get(environment=api_environment(request, environment), pk=pk)


def readable_page(
    request: HttpRequest,
    environment: str | None,
    rows: Callable[..., QuerySet[Any]],
    *,
    page: int,
    page_size: int,
    **filters: Any,
) -> dict[str, object]:
    """One page of a directory list of the caller's environment (directory readers only)."""
    require_permission(request, roles.DIRECTORY_VIEW)
    found = rows(environment=api_environment(request, environment), **filters)
    return paginate(found, page=page, page_size=page_size)


EndUserSearch = Query("", description="Email, name, phone or upstream id.")
CreatedFrom = Query(None, description="Created on or after (YYYY-MM-DD).")
CreatedTo = Query(None, description="Created on or before (YYYY-MM-DD).")


class EndUserIn(Schema):
    """The upstream's own creation fields (interface.md 2.4)."""

    type: Literal["individual", "business"] = Field(
        "individual", description="`individual` (KYC) or `business` (KYB)."
    )
    email: Text = Field(description="Email address.", examples=["ana@example.com"])
    phone_number: Text = Field(
        description="Phone number; sent in E.164 (`+525512345678`). A national number is read "
        "in the given country.",
        examples=["+52 55 1234 5678"],
    )
    first_name: Text = Field(description="Given name (for a business: the representative's).")
    last_name: Text = Field(description="Family name.")
    country: Text = Field(description="ISO 3166-1 alpha-2 country code.", examples=["MX"])


class EndUserPatch(Schema):
    """Only the fields to change; unchanged values are not sent upstream."""

    email: Text | None = Field(None, description="New email address.")
    phone_number: Text | None = Field(None, description="New phone number.")
    first_name: Text | None = Field(None, description="Identity: restarts verification.")
    last_name: Text | None = Field(None, description="Identity: restarts verification.")
    country: Text | None = Field(None, description="Identity: restarts verification.")
    confirm_reverification: bool = Field(
        False,
        description="Must be true to change first_name, last_name or country: such a change "
        "restarts identity verification (otherwise 409 reverification_required).",
    )


class EndUserOut(Schema):
    id: int = Field(description="PayOps id (use it in paths).")
    upstream_id: str = Field(description="The upstream's user_id; empty until created upstream.")
    environment: str = Field(description="Name of the environment the user lives in.")
    type: str
    email: str
    phone_number: str = Field(description="E.164.")
    first_name: str
    last_name: str
    country: str
    status: str = Field(description="`unverified` or `verified`.")
    verification_status: str = Field(description="`not_started`, `verified` or `rejected`.")
    reasons: list[str] = Field(description="Upstream rejection codes of the last failed check.")
    reasons_text: list[str] = Field(description="The same reasons in plain words.")
    requires_reverification: bool
    kyc_type: str
    reviewed_at: datetime | None = Field(description="When compliance last marked it reviewed.")
    reviewed_by: str | None = Field(description="Email of who marked it reviewed.")
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_environment(obj: EndUser) -> str:
        return obj.environment.name

    @staticmethod
    def resolve_reasons_text(obj: EndUser) -> list[str]:
        return [reason_in_words(code) for code in obj.reasons]

    @staticmethod
    def resolve_reviewed_by(obj: EndUser) -> str | None:
        return obj.reviewed_by.email if obj.reviewed_by else None


class EndUserPage(PageOut[EndUserOut]):
    count: int = Field(description="Rows matching the filters.")


class NoteIn(Schema):
    text: MultilineText = Field(description="A compliance note on this user's KYC.")


class ReviewIn(Schema):
    reason: MultilineText = Field(description="Why the KYC result was reviewed as it is.")


class ReviewOut(Schema):
    id: int
    kind: str = Field(description="`note` or `reviewed`.")
    by: str
    at: datetime
    text: str
    verification_status: str = Field(description="What the reviewer looked at.")

    @staticmethod
    def resolve_by(obj: KycReview) -> str:
        return obj.by.email


@router.post(
    "/end-users",
    response={201: EndUserOut, 409: ErrorOut, 502: ErrorOut, **ERROR_RESPONSES},
    summary="Create an end user",
)
@needs(roles.END_USERS_MANAGE)
def create_end_user(
    request: HttpRequest,
    payload: EndUserIn,
    environment: str | None = EnvironmentName,
    idempotency_key: str | None = submission_key("user"),
) -> Status[EndUser]:
    """Created upstream at once; in sandbox the answer already carries the KYC outcome."""
    user = services.end_user_create(
        environment=api_environment(request, environment),
        by=acting_staff(request),
        request_key=request_key(idempotency_key),
        **payload.dict(),
    )
    return Status(201, user)


@router.get("/end-users", response={200: EndUserPage, **ERROR_RESPONSES}, summary="List end users")
@needs(roles.DIRECTORY_VIEW)
def list_end_users(
    request: HttpRequest,
    environment: str | None = EnvironmentName,
    status: Literal["unverified", "verified"] | None = None,
    verification_status: Literal["not_started", "verified", "rejected"] | None = None,
    created_from: date | None = CreatedFrom,
    created_to: date | None = CreatedTo,
    search: Text = EndUserSearch,
    page: int = PageNumber,
    page_size: int = PageSize,
) -> dict[str, object]:
    return readable_page(
        request,
        environment,
        selectors.end_user_list,
        page=page,
        page_size=page_size,
        status=status or "",
        verification_status=verification_status or "",
        created_from=created_from,
        created_to=created_to,
        search=search,
    )


@router.get("/end-users/{id}", response={200: EndUserOut, **ERROR_RESPONSES})
@needs(roles.DIRECTORY_VIEW)
def get_end_user(
    request: HttpRequest, id: int, environment: str | None = EnvironmentName
) -> EndUser:
    return readable(request, environment, selectors.end_user_get, id)


@router.patch(
    "/end-users/{id}",
    response={200: EndUserOut, 409: ErrorOut, 502: ErrorOut, **ERROR_RESPONSES},
    summary="Update an end user",
)
@needs(roles.END_USERS_MANAGE)
def update_end_user(
    request: HttpRequest, id: int, payload: EndUserPatch, environment: str | None = EnvironmentName
) -> EndUser:
    """Sends only the fields that differ; identity changes need `confirm_reverification`."""
    user = readable(request, environment, selectors.end_user_get, id)
    values = payload.dict(exclude_unset=True)
    confirm = bool(values.pop("confirm_reverification", False))
    return services.end_user_update(
        end_user=user,
        by=acting_staff(request),
        values=values,
        confirm_reverification=confirm,
    )


@router.post(
    "/end-users/{id}/refresh",
    response={200: EndUserOut, 502: ErrorOut, **ERROR_RESPONSES},
    summary="Refresh an end user from the upstream",
)
@needs(roles.DIRECTORY_VIEW)
def refresh_end_user(
    request: HttpRequest, id: int, environment: str | None = EnvironmentName
) -> EndUser:
    user = readable(request, environment, selectors.end_user_get, id)
    return services.end_user_refresh(end_user=user, by=acting_staff(request))


@router.post(
    "/end-users/{id}/kyc-notes",
    response={201: ReviewOut, **ERROR_RESPONSES},
    summary="Add a compliance note",
)
@needs(roles.KYC_REVIEW)
def add_kyc_note(
    request: HttpRequest, id: int, payload: NoteIn, environment: str | None = EnvironmentName
) -> Status[KycReview]:
    user = readable(request, environment, selectors.end_user_get, id)
    return Status(201, kyc.kyc_note_add(end_user=user, by=acting_staff(request), text=payload.text))


@router.post(
    "/end-users/{id}/kyc-review",
    response={201: ReviewOut, **ERROR_RESPONSES},
    summary="Mark the KYC result reviewed, with a reason",
)
@needs(roles.KYC_REVIEW)
def mark_kyc_reviewed(
    request: HttpRequest, id: int, payload: ReviewIn, environment: str | None = EnvironmentName
) -> Status[KycReview]:
    user = readable(request, environment, selectors.end_user_get, id)
    review = kyc.kyc_mark_reviewed(end_user=user, by=acting_staff(request), reason=payload.reason)
    return Status(201, review)
