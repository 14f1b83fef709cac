"""Reads of reconciliation: runs and the exceptions queue (a constant number of queries a page)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext

from books.reconciliation.models import (
    ExceptionComment,
    ReconciliationException,
    ReconciliationRun,
)
from gateway.models import Environment
from staff import roles
from staff.models import AuditEntry, StaffUser

EXCEPTION_SORTS = {
    "created": "created_at",
    "-created": "-created_at",
    "updated": "updated_at",
    "-updated": "-updated_at",
    "kind": "kind",
    "-kind": "-kind",
    "state": "state",
    "-state": "-state",
    "difference": "difference",
    "-difference": "-difference",
}


def require_books_reader(user: StaffUser | None) -> None:
    if user is not None and not user.has_perm(roles.BOOKS_VIEW):
        raise PermissionDenied(
            gettext("You do not have the permission %(BOOKS_VIEW)s.")
            % {"BOOKS_VIEW": roles.BOOKS_VIEW}
        )


def run_list(*, user: StaffUser, environment: Environment | None) -> QuerySet[ReconciliationRun]:
    require_books_reader(user)
    runs = ReconciliationRun.objects.select_related("environment", "virtual_account", "started_by")
    if environment is not None:
        runs = runs.filter(environment=environment)
    return runs.order_by("-started_at", "-pk")


def run_get(*, user: StaffUser, pk: int) -> ReconciliationRun:
    require_books_reader(user)
    run = (
        ReconciliationRun.objects.select_related("environment", "virtual_account", "started_by")
        .filter(pk=pk)
        .first()
    )
    if run is None:
        raise Http404("No such run.")
    return run


def exception_list(
    *,
    user: StaffUser,
    environment: Environment | None = None,
    state: str = "",
    kind: str = "",
    owner_id: int | None = None,
    unowned: bool = False,
    run_id: int | None = None,
    sort: str = "-created",
) -> QuerySet[ReconciliationException]:
    """The queue; `state="unresolved"` is open and investigating together."""
    require_books_reader(user)
    items = ReconciliationException.objects.select_related(
        "environment", "owner", "payout", "virtual_account", "resolved_by"
    )
    if environment is not None:
        items = items.filter(environment=environment)
    if state == "unresolved":
        items = items.exclude(state="resolved")
    elif state:
        items = items.filter(state=state)
    if kind:
        items = items.filter(kind=kind)
    if owner_id is not None:
        items = items.filter(owner_id=owner_id)
    elif unowned:
        items = items.filter(owner=None)
    if run_id is not None:
        items = items.filter(last_seen_run_id=run_id) | items.filter(first_seen_run_id=run_id)
    return items.order_by(EXCEPTION_SORTS.get(sort, "-created_at"), "-pk")


def exception_get(*, user: StaffUser, pk: int) -> ReconciliationException:
    require_books_reader(user)
    item = (
        ReconciliationException.objects.select_related(
            "environment",
            "owner",
            "payout",
            "virtual_account",
            "resolved_by",
            "first_seen_run",
            "last_seen_run",
        )
        .filter(pk=pk)
        .first()
    )
    if item is None:
        raise Http404("No such exception.")
    return item


def exception_comments(item: ReconciliationException) -> QuerySet[ExceptionComment]:
    return item.comments.select_related("author").order_by("at", "pk")


def exception_audit(item: ReconciliationException) -> QuerySet[AuditEntry]:
    return (
        AuditEntry.objects.filter(
            target_type="books.reconciliationexception", target_id=str(item.pk)
        )
        .select_related("actor")
        .order_by("at", "pk")
    )


def reconcilers() -> QuerySet[StaffUser]:
    """Who may own an exception (those who may reconcile), for the assign form."""
    from django.contrib.auth.models import Permission
    from django.db.models import Q

    permission = Permission.objects.filter(
        content_type__app_label="books", codename="reconcile"
    ).first()
    if permission is None:
        return StaffUser.objects.none()
    return (
        StaffUser.objects.filter(is_active=True)
        .filter(
            Q(groups__permissions=permission)
            | Q(user_permissions=permission)
            | Q(is_superuser=True)
        )
        .distinct()
        .order_by("email")
    )
