"""Virtual-account and recipient reads: filtered lists, one record with its history."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Prefetch, QuerySet

from accounts.models import (
    Deposit,
    Recipient,
    RecipientTimelineEntry,
    VirtualAccount,
    VirtualAccountMode,
    VirtualAccountTimelineEntry,
)
from console.lists import filter_given
from console.lists import search as matching
from gateway.models import Environment
from users.models import EndUser, VerificationStatus
from users.selectors import one_of_environment


def virtual_account_list(
    *,
    environment: Environment,
    status: str = "",
    mode: str = "",
    end_user_id: int | None = None,
    search: str = "",
) -> QuerySet[VirtualAccount]:
    rows = VirtualAccount.objects.filter(environment=environment).select_related(
        "environment", "end_user", "created_by"
    )
    rows = filter_given(rows, status=status, mode=mode, end_user_id=end_user_id)
    rows = matching(
        rows,
        search,
        "end_user__email__icontains",
        "end_user__last_name__icontains",
        "account_number__endswith",
        "upstream_id__iexact",
    )
    return rows.order_by("-created_at", "-id")


def virtual_account_get(*, environment: Environment | None, pk: int) -> VirtualAccount:
    rows = VirtualAccount.objects.select_related("environment", "end_user", "created_by")
    return one_of_environment(rows, environment=environment, pk=pk)


def crypto_funding(virtual_account: VirtualAccount) -> list[dict[str, Any]]:
    """The stablecoins and networks that funded a crypto account's payouts, most used first.

    The account record itself names no stablecoin (each payout chooses one in its
    payment_instructions), so this is what is known; read through the reverse relation, so this
    app imports no payouts code."""
    if virtual_account.mode != VirtualAccountMode.CRYPTO:
        return []
    rows = (
        virtual_account.payouts.exclude(payment_currency="")
        .values("payment_currency", "payment_network")
        .annotate(payouts=Count("pk"))
        .order_by("-payouts", "payment_currency", "payment_network")
    )
    return [
        {
            "currency": r["payment_currency"],
            "network": r["payment_network"],
            "payouts": r["payouts"],
        }
        for r in rows
    ]


def virtual_account_detail(*, environment: Environment | None, pk: int) -> VirtualAccount:
    rows = VirtualAccount.objects.select_related(
        "environment", "end_user", "created_by"
    ).prefetch_related(
        Prefetch(
            "timeline",
            queryset=VirtualAccountTimelineEntry.objects.select_related("actor").order_by(
                "-at", "-id"
            ),
        ),
        Prefetch("deposits", queryset=Deposit.objects.order_by("-received_at", "-id")),
    )
    return one_of_environment(rows, environment=environment, pk=pk)


def recipient_list(
    *,
    environment: Environment,
    end_user_id: int | None = None,
    account_type: str = "",
    search: str = "",
) -> QuerySet[Recipient]:
    rows = Recipient.objects.filter(environment=environment).select_related(
        "environment", "end_user", "created_by"
    )
    rows = filter_given(rows, end_user_id=end_user_id, account_type=account_type)
    rows = matching(
        rows,
        search,
        "first_name__icontains",
        "last_name__icontains",
        "company_name__icontains",
        "email__icontains",
        "upstream_id__iexact",
    )
    return rows.order_by("-created_at", "-id")


def recipient_get(*, environment: Environment | None, pk: int) -> Recipient:
    rows = Recipient.objects.select_related("environment", "end_user", "created_by")
    return one_of_environment(rows, environment=environment, pk=pk)


def recipient_detail(*, environment: Environment | None, pk: int) -> Recipient:
    rows = Recipient.objects.select_related(
        "environment", "end_user", "created_by"
    ).prefetch_related(
        Prefetch(
            "timeline",
            queryset=RecipientTimelineEntry.objects.select_related("actor").order_by("-at", "-id"),
        )
    )
    return one_of_environment(rows, environment=environment, pk=pk)


def recipient_payouts(recipient: Recipient) -> QuerySet[Any] | None:
    """The payouts that used this recipient, once the payouts app adds `Payout.recipient`
    (related_name "payouts"); None until then, so the page can say so."""
    related = getattr(recipient, "payouts", None)
    return related.all().order_by("-pk") if related is not None else None


def verified_end_users(*, environment: Environment) -> QuerySet[EndUser]:
    """Who may get a virtual account or a recipient (the create forms' choices)."""
    return synced_end_users(environment=environment).filter(
        verification_status=VerificationStatus.VERIFIED
    )


def synced_end_users(*, environment: Environment) -> QuerySet[EndUser]:
    """Who exists upstream (by name)."""
    return (
        EndUser.objects.filter(environment=environment)
        .exclude(upstream_id="")
        .order_by("last_name", "first_name", "email")
    )
