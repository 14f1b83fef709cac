"""Pages of reconciliation: runs (list, start, one run live) and the exceptions queue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from books.reconciliation import engine, exception_actions, selectors
from books.reconciliation.forms import (
    AssignForm,
    CommentForm,
    ExceptionFilterForm,
    ReasonForm,
    StateForm,
)
from books.reconciliation.models import ExceptionKind, ExceptionState, ReconciliationException
from console.lists import list_template, page_of
from gateway.models import Environment
from staff import roles
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.requests import staff_of
from users.views import current_environment


def _owners() -> list[tuple[str, str]]:
    return [(str(u.pk), u.email) for u in selectors.reconcilers()]


@login_required
@permission_required(roles.BOOKS_VIEW, raise_exception=True)
def run_list(request: HttpRequest) -> HttpResponse:
    environment = current_environment(request)
    page, query = page_of(
        request, selectors.run_list(user=staff_of(request), environment=environment)
    )
    context = {
        "page": page,
        "query": query,
        "environment": environment,
        "can_reconcile": request.user.has_perm(roles.RECONCILE),
        "accounts": environment_accounts(environment),
    }
    return render(request, list_template(request, "books/reconciliation/run_list.html"), context)


def environment_accounts(environment: Environment) -> list[Any]:
    from accounts.models import VirtualAccount

    return list(
        VirtualAccount.objects.filter(environment=environment, mode="fiat")
        .exclude(upstream_id=None)
        .select_related("end_user")
        .order_by("pk")[:200]
    )


@login_required
@require_POST
@permission_required(roles.RECONCILE, raise_exception=True)
def run_start(request: HttpRequest) -> HttpResponse:
    environment = current_environment(request)
    account = None
    account_id = request.POST.get("virtual_account", "")
    if account_id.isdigit():
        account = next(
            (va for va in environment_accounts(environment) if va.pk == int(account_id)), None
        )
    try:
        run = engine.run_start(
            environment=environment, virtual_account=account, by=staff_of(request)
        )
    except ServiceError as exc:
        messages.error(request, exc.as_message())
        return redirect("books:reconciliation")
    messages.success(
        request, gettext("Run %(pk)s started: it runs in the background.") % {"pk": run.pk}
    )
    return redirect("books:reconciliation_run", run.pk)


@login_required
@permission_required(roles.BOOKS_VIEW, raise_exception=True)
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.run_get(user=staff_of(request), pk=pk)
    items = selectors.exception_list(user=staff_of(request), run_id=run.pk, sort="kind")[:200]
    context = {"run": run, "items": list(items)}
    return render(request, "books/reconciliation/run_detail.html", context)


@login_required
@permission_required(roles.BOOKS_VIEW, raise_exception=True)
def exception_list(request: HttpRequest) -> HttpResponse:
    environments = [(e.name, e.name) for e in Environment.objects.filter(is_active=True)]
    form = ExceptionFilterForm(request.GET or None, owners=_owners(), environments=environments)
    if form.is_bound:
        form.is_valid()
    filters = form.filters()
    name = filters.pop("environment")
    environment = (
        Environment.objects.filter(name=name).first() if name else current_environment(request)
    )
    rows = selectors.exception_list(user=staff_of(request), environment=environment, **filters)
    page, query = page_of(request, rows)
    context = {"form": form, "page": page, "query": query, "kinds": ExceptionKind}
    return render(
        request, list_template(request, "books/reconciliation/exception_list.html"), context
    )


def _detail_context(request: HttpRequest, item: ReconciliationException) -> dict[str, Any]:
    owners = _owners()
    keys = sorted({*item.ours.keys(), *item.theirs.keys()})
    return {
        "item": item,
        "sides": [
            {
                "name": key,
                "ours": item.ours.get(key),
                "theirs": item.theirs.get(key),
                "differs": item.ours.get(key) != item.theirs.get(key),
            }
            for key in keys
        ],
        "comments": list(selectors.exception_comments(item)),
        "audit": list(selectors.exception_audit(item)),
        "can_reconcile": request.user.has_perm(roles.RECONCILE),
        "unresolved": item.state != ExceptionState.RESOLVED,
        "assign_form": AssignForm(initial={"owner": str(item.owner_id or "")}, owners=owners),
        "comment_form": CommentForm(),
        "state_form": StateForm(initial={"state": item.state}),
        "reason_form": ReasonForm(),
        "can_adopt": item.kind == ExceptionKind.MISSING_IN_PAYOPS,
        "can_refetch": item.kind != ExceptionKind.BALANCE_DIFFERS and bool(item.upstream_id),
    }


@login_required
@permission_required(roles.BOOKS_VIEW, raise_exception=True)
def exception_detail(request: HttpRequest, pk: int) -> HttpResponse:
    item = selectors.exception_get(user=staff_of(request), pk=pk)
    return render(
        request, "books/reconciliation/exception_detail.html", _detail_context(request, item)
    )


@login_required
@require_POST
@permission_required(roles.RECONCILE, raise_exception=True)
def exception_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    """One action of the exception page; a refusal shows above the page."""
    by = staff_of(request)
    item = selectors.exception_get(user=by, pk=pk)
    try:
        done = _act(request, item, action, by)
    except ServiceError as exc:
        messages.error(request, exc.as_message())
    else:
        messages.success(request, done)
    return redirect("books:exception", pk)


def _act(request: HttpRequest, item: ReconciliationException, action: str, by: StaffUser) -> str:
    handler = ACTIONS.get(action)
    if handler is None:
        raise ServiceError(gettext("Unknown action."), code="unknown_action", status=404)
    return handler(request, item, by)


def _assign(request: HttpRequest, item: ReconciliationException, by: StaffUser) -> str:
    form = AssignForm(request.POST, owners=_owners())
    owner_id = form.data.get("owner") or ""
    owner = StaffUser.objects.filter(pk=int(owner_id)).first() if owner_id.isdigit() else None
    exception_actions.exception_assign(item=item, owner=owner, by=by)
    if owner is None:
        return gettext("Owner: nobody.")
    return gettext("Owner: %(email)s.") % {"email": owner.email}


def _comment(request: HttpRequest, item: ReconciliationException, by: StaffUser) -> str:
    comment = CommentForm(request.POST)
    if not comment.is_valid():
        raise ServiceError(
            gettext("A comment needs text."), errors=[("body", gettext("is required"))]
        )
    exception_actions.exception_comment(item=item, body=comment.cleaned_data["body"], by=by)
    return gettext("Comment added.")


def _state(request: HttpRequest, item: ReconciliationException, by: StaffUser) -> str:
    state = StateForm(request.POST)
    if not state.is_valid():
        raise ServiceError(gettext("Choose a state."), errors=[("state", gettext("is required"))])
    exception_actions.exception_set_state(
        item=item,
        state=state.cleaned_data["state"],
        reason=state.cleaned_data.get("reason") or "",
        by=by,
    )
    return gettext("State changed.")


def _explain(request: HttpRequest, item: ReconciliationException, by: StaffUser) -> str:
    reason = ReasonForm(request.POST)
    text = reason.cleaned_data["reason"] if reason.is_valid() else ""
    exception_actions.exception_explain(item=item, reason=text, by=by)
    return gettext("Marked as explained.")


def _adopt(request: HttpRequest, item: ReconciliationException, by: StaffUser) -> str:
    exception_actions.exception_adopt(item=item, by=by)
    return gettext("Adopted: PayOps now holds the payout.")


def _refetch(request: HttpRequest, item: ReconciliationException, by: StaffUser) -> str:
    exception_actions.exception_refetch(item=item, by=by)
    return gettext("Fetched again and applied; the next run checks it.")


# The `<slug:action>` of the exception page's forms -> what it does (one hop from the URL).
ACTIONS: dict[str, Callable[[HttpRequest, ReconciliationException, StaffUser], str]] = {
    "assign": _assign,
    "comment": _comment,
    "state": _state,
    "explain": _explain,
    "adopt": _adopt,
    "refetch": _refetch,
}
