"""End-user reads: lists with server-side filters, the KYC queue, one user with its history."""

from __future__ import annotations

from datetime import date

from django.db.models import Model, Prefetch, QuerySet
from django.shortcuts import get_object_or_404

from console.lists import filter_given
from console.lists import search as matching
from gateway.models import Environment
from users.models import EndUser, EndUserTimelineEntry, KycReview, VerificationStatus


def end_user_list(
    *,
    environment: Environment,
    status: str = "",
    verification_status: str = "",
    created_from: date | None = None,
    created_to: date | None = None,
    search: str = "",
) -> QuerySet[EndUser]:
    """One query per page whatever its length (the people shown are joined in)."""
    rows = EndUser.objects.filter(environment=environment).select_related(
        "environment", "created_by", "reviewed_by"
    )
    rows = filter_given(
        rows,
        status=status,
        verification_status=verification_status,
        created_at__date__gte=created_from,
        created_at__date__lte=created_to,
    )
    rows = matching(
        rows,
        search,
        "email__icontains",
        "first_name__icontains",
        "last_name__icontains",
        "phone_number__icontains",
        "upstream_id__iexact",
    )
    return rows.order_by("-created_at", "-id")


def kyc_queue(
    *, environment: Environment, verification_status: str = "", reviewed: str = ""
) -> QuerySet[EndUser]:
    """Users not verified (rejected, or waiting for a decision), oldest first; `reviewed`
    "no" keeps those nobody marked reviewed yet, "yes" those someone did."""
    rows = (
        EndUser.objects.filter(environment=environment)
        .exclude(verification_status=VerificationStatus.VERIFIED)
        .exclude(upstream_id="")
        .select_related("reviewed_by", "created_by")
    )
    rows = filter_given(rows, verification_status=verification_status)
    if reviewed == "no":
        rows = rows.filter(reviewed_at__isnull=True)
    elif reviewed == "yes":
        rows = rows.filter(reviewed_at__isnull=False)
    return rows.order_by("created_at", "id")


def one_of_environment[M: Model](
    rows: QuerySet[M], *, environment: Environment | None, pk: int
) -> M:
    """One record by id, of `environment` when given (404 when not there)."""
    if environment is not None:
        rows = rows.filter(environment=environment)
    return get_object_or_404(rows, pk=pk)


def end_user_get(*, environment: Environment | None, pk: int) -> EndUser:
    rows = EndUser.objects.select_related("environment", "created_by", "reviewed_by")
    return one_of_environment(rows, environment=environment, pk=pk)


def end_user_detail(*, environment: Environment | None, pk: int) -> EndUser:
    """The user with timeline, reviews, accounts and recipients prefetched (constant queries)."""
    rows = EndUser.objects.select_related(
        "environment", "created_by", "reviewed_by"
    ).prefetch_related(
        Prefetch(
            "timeline",
            queryset=EndUserTimelineEntry.objects.select_related("actor").order_by("-at", "-id"),
        ),
        Prefetch("reviews", queryset=KycReview.objects.select_related("by").order_by("-at", "-id")),
        # Reverse relations in their own models' order: users import no accounts code.
        "virtual_accounts",
        "recipients",
    )
    return one_of_environment(rows, environment=environment, pk=pk)
