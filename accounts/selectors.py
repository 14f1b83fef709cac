"""Virtual-account and recipient reads: filtered lists, one record with its history."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Prefetch, Q, QuerySet

from accounts.models import (
    Deposit,
    Recipient,
    RecipientChange,
    RecipientChangeStatus,
    RecipientStatus,
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


# The list's `status` filter: a status, "pending" (the recipient or a change of it waits for
# approval), or "" (in use: all but archived and superseded versions).
PENDING = "pending"
OUT_OF_USE = (RecipientStatus.ARCHIVED, RecipientStatus.SUPERSEDED)


def recipient_list(
    *,
    environment: Environment,
    end_user_id: int | None = None,
    account_type: str = "",
    status: str = "",
    search: str = "",
) -> QuerySet[Recipient]:
    rows = (
        Recipient.objects.filter(environment=environment)
        .select_related("environment", "end_user", "created_by", "approved_by")
        .prefetch_related(_pending_changes())
    )
    rows = filter_given(rows, end_user_id=end_user_id, account_type=account_type)
    if status == PENDING:
        rows = rows.filter(
            Q(status=RecipientStatus.PENDING_APPROVAL, upstream_id__gt="", supersedes=None)
            | Q(changes__status=RecipientChangeStatus.PENDING_APPROVAL)
        ).distinct()
    elif status:
        rows = rows.filter(status=status)
    else:
        rows = rows.exclude(status__in=OUT_OF_USE)
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


def _pending_changes() -> Prefetch[Any]:
    return Prefetch(
        "changes",
        queryset=RecipientChange.objects.filter(
            status=RecipientChangeStatus.PENDING_APPROVAL
        ).select_related("proposed_by"),
        to_attr="pending_changes",
    )


def recipient_approval_queue(*, environment: Environment) -> QuerySet[Recipient]:
    """What waits for a second person: new recipients and changes of details, oldest first."""
    return recipient_list(environment=environment, status=PENDING).order_by("created_at", "id")


def recipient_history(recipient: Recipient) -> dict[str, Any]:
    """
    Every version of the recipient (an approved change is a new upstream recipient that
    supersedes the old) with who registered, approved, rejected or archived it and when, and
    every change proposed with its before/after (account numbers masked to the last four).
    """
    from accounts.recipient_control import current_values, masked

    chain = [recipient]
    while chain[0].supersedes_id:
        chain.insert(0, Recipient.objects.select_related(*_PEOPLE).get(pk=chain[0].supersedes_id))
    while True:
        nxt = Recipient.objects.select_related(*_PEOPLE).filter(supersedes=chain[-1]).first()
        if nxt is None:
            break
        chain.append(nxt)
    changes = (
        RecipientChange.objects.filter(recipient__in=chain)
        .select_related("proposed_by", "decided_by")
        .order_by("proposed_at", "id")
    )

    def email(user: Any) -> str | None:
        return user.email if user is not None else None

    return {
        "versions": [
            {
                "version": number,
                "recipient_id": row.pk,
                "upstream_id": row.upstream_id,
                "status": row.status,
                "status_label": row.get_status_display(),  # what the page shows
                "registered_by": email(row.created_by),
                "registered_at": row.created_at,
                "approved_by": email(row.approved_by)
                or (row.approval_note if row.approved_at else None),
                "approved_at": row.approved_at,
                "rejected_by": email(row.rejected_by),
                "rejected_at": row.rejected_at,
                "rejection_reason": row.rejection_reason,
                "archived_by": email(row.archived_by),
                "archived_at": row.archived_at,
                "details": masked(current_values(row)),
            }
            for number, row in enumerate(chain, start=1)
        ],
        "changes": [
            {
                "change_id": change.pk,
                "recipient_id": change.recipient_id,
                "status": change.status,
                "status_label": change.get_status_display(),
                "proposed_by": email(change.proposed_by),
                "proposed_at": change.proposed_at,
                "decided_by": email(change.decided_by),
                "decided_at": change.decided_at,
                "reason": change.reason,
                "before": change.before,
                "after": change.after,
                "rows": change.diff_rows,
                "new_recipient_id": change.new_recipient_id,
            }
            for change in changes
        ],
    }


_PEOPLE = ("created_by", "approved_by", "rejected_by", "archived_by")


def recipient_get(*, environment: Environment | None, pk: int) -> Recipient:
    rows = Recipient.objects.select_related("environment", "end_user", *_PEOPLE).prefetch_related(
        _pending_changes()
    )
    return one_of_environment(rows, environment=environment, pk=pk)


def recipient_detail(*, environment: Environment | None, pk: int) -> Recipient:
    rows = Recipient.objects.select_related("environment", "end_user", *_PEOPLE).prefetch_related(
        Prefetch(
            "timeline",
            queryset=RecipientTimelineEntry.objects.select_related("actor").order_by("-at", "-id"),
        ),
        _pending_changes(),
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
