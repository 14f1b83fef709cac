"""Account pages: virtual accounts (open, balance, refresh, deposits) and recipients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.db.models import Model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from accounts import bank_details, recipient_control, recipients, selectors, virtual_accounts
from accounts.forms import (
    RECIPIENT_ERROR_FIELDS,
    VIRTUAL_ACCOUNT_ERROR_FIELDS,
    RecipientArchiveForm,
    RecipientEditForm,
    RecipientFilterForm,
    RecipientForm,
    RecipientRejectForm,
    VirtualAccountFilterForm,
    VirtualAccountForm,
)
from accounts.models import Recipient, RecipientChange
from console.lists import is_htmx
from staff import roles
from staff.errors import ServiceError
from staff.step_up import StepUpRequired
from users.views import current_environment, directory_list_view, sandbox_installed, staff_of


def _initial_end_user(request: HttpRequest) -> dict[str, Any]:
    return (
        {"end_user": request.GET["end_user"]} if request.GET.get("end_user", "").isdigit() else {}
    )


virtual_account_list = directory_list_view(
    filter_form=VirtualAccountFilterForm,
    rows=selectors.virtual_account_list,
    template="accounts/list.html",
)


def _create_page[T: Model](
    request: HttpRequest,
    *,
    form_class: type[VirtualAccountForm | RecipientForm],
    create: Callable[[dict[str, Any]], T],
    rename: dict[str, str],
    done: Callable[[T], str],
    detail: str,
    template: str,
) -> HttpResponse:
    """A page that makes a record for an end user: the form, `create` with its checked values
    (a refusal lands on the form), then the new record's `detail` page."""
    end_users = selectors.synced_end_users(environment=current_environment(request))
    form = form_class(request.POST or None, end_users=end_users, initial=_initial_end_user(request))
    if request.method == "POST" and form.is_valid():
        try:
            record = create(dict(form.cleaned_data))
        except ServiceError as error:
            error.add_to_form(form, rename=rename)
        else:
            messages.success(request, done(record))
            return redirect(detail, pk=record.pk)
    return render(request, template, {"form": form})


@login_required
@permission_required(roles.ACCOUNTS_MANAGE, raise_exception=True)
def virtual_account_create(request: HttpRequest) -> HttpResponse:
    return _create_page(
        request,
        form_class=VirtualAccountForm,
        create=lambda values: virtual_accounts.virtual_account_create(
            end_user=values["end_user"],
            mode=values["mode"],
            by=staff_of(request),
            request_key=values["request_key"],
        ),
        rename=VIRTUAL_ACCOUNT_ERROR_FIELDS,
        done=lambda va: gettext("The virtual account was opened; it activates shortly."),
        detail="accounts:virtual_account_detail",
        template="accounts/virtual_account_form.html",
    )


@login_required
@permission_required(roles.DIRECTORY_VIEW, raise_exception=True)
def virtual_account_detail(request: HttpRequest, pk: int) -> HttpResponse:
    va = selectors.virtual_account_detail(environment=current_environment(request), pk=pk)
    context = {
        "va": va,
        "crypto_funding": selectors.crypto_funding(va),
        "sandbox": sandbox_installed(),
        "can_simulate": virtual_accounts.may_fund_in_sandbox(request.user),
    }
    if is_htmx(request):
        return render(request, "accounts/virtual_account_detail.html#balance", context)
    return render(request, "accounts/virtual_account_detail.html", context)


@login_required
@require_POST
@permission_required(roles.DIRECTORY_VIEW, raise_exception=True)
def virtual_account_refresh(request: HttpRequest, pk: int) -> HttpResponse:
    environment = current_environment(request)
    va = selectors.virtual_account_get(environment=environment, pk=pk)
    error = None
    try:
        virtual_accounts.virtual_account_refresh(virtual_account=va, by=staff_of(request))
    except ServiceError as exc:
        error = exc.message
    if is_htmx(request):
        va = selectors.virtual_account_detail(environment=environment, pk=pk)
        return render(
            request,
            "accounts/virtual_account_detail.html#balance",
            {"va": va, "refresh_error": error},
        )
    if error:
        messages.error(request, error)
    else:
        messages.success(request, gettext("Refreshed from the upstream."))
    return redirect("accounts:virtual_account_detail", pk=pk)


recipient_list = directory_list_view(
    filter_form=RecipientFilterForm,
    rows=selectors.recipient_list,
    template="accounts/recipient_list.html",
)


@login_required
@permission_required(roles.ACCOUNTS_MANAGE, raise_exception=True)
def recipient_create(request: HttpRequest) -> HttpResponse:
    def register(values: dict[str, Any]) -> Recipient:
        end_user, request_key = values.pop("end_user"), values.pop("request_key")
        return recipients.recipient_create(
            end_user=end_user, by=staff_of(request), values=values, request_key=request_key
        )

    return _create_page(
        request,
        form_class=RecipientForm,
        create=register,
        rename=RECIPIENT_ERROR_FIELDS,
        done=lambda recipient: (
            gettext("%(name)s was registered upstream.") % {"name": recipient.display_name}
        ),
        detail="accounts:recipient_detail",
        template="accounts/recipient_form.html",
    )


def _bank_details(recipient: Recipient, change: RecipientChange | None) -> dict[str, Any]:
    """What an approver checks: the details, or a pending change's before and after."""
    current = recipient_control.current_values(recipient)
    return {
        "details": bank_details.bank_detail_rows(current),
        "compared": bank_details.compared_rows(current, change.values) if change else None,
    }


def _detail_context(request: HttpRequest, recipient: Recipient) -> dict[str, Any]:
    user = staff_of(request)
    change = recipient.pending_changes[0] if recipient.pending_changes else None  # type: ignore[attr-defined]
    waiting = change is not None or recipient.status == "pending_approval"
    return {
        **_bank_details(recipient, change),
        "who_may_approve": recipient_control.who_may_approve(),
        "recipient": recipient,
        "payouts": selectors.recipient_payouts(recipient),
        "change": change,
        "history": selectors.recipient_history(recipient),
        "waiting": waiting,
        "decision_refusal": recipient_control.decision_refusal(user, recipient, change)
        if waiting
        else None,
        "can_manage": user.has_perm(roles.ACCOUNTS_MANAGE),
        "reject_form": RecipientRejectForm(),
        "archive_form": RecipientArchiveForm(),
        "payable_reason": recipients.recipient_not_payable_reason(recipient),
    }


@login_required
@permission_required(roles.DIRECTORY_VIEW, raise_exception=True)
def recipient_detail(request: HttpRequest, pk: int) -> HttpResponse:
    recipient = selectors.recipient_detail(environment=current_environment(request), pk=pk)
    return render(request, "accounts/recipient_detail.html", _detail_context(request, recipient))


@login_required
@permission_required(roles.DIRECTORY_VIEW, raise_exception=True)
def recipient_approvals(request: HttpRequest) -> HttpResponse:
    """The queue of new recipients and changes of details waiting for a second person."""
    rows = selectors.recipient_approval_queue(environment=current_environment(request))
    user = staff_of(request)
    items = []
    for row in rows:
        change = row.pending_changes[0] if row.pending_changes else None  # type: ignore[attr-defined]
        refusal = recipient_control.decision_refusal(user, row, change)
        items.append(
            {
                "recipient": row,
                "change": change,
                "refusal": refusal.message if refusal else "",
                **_bank_details(row, change),
            }
        )
    return render(
        request,
        "accounts/recipient_approvals.html",
        {
            "items": items,
            "reject_form": RecipientRejectForm(),
            # Someone who may decide nothing reads one plain line, not a refusal per item.
            "may_not_decide": recipient_control.approver_refusal(user) is not None,
            "who_may_approve": recipient_control.who_may_approve(),
        },
    )


def _decision(
    request: HttpRequest, pk: int, act: Callable[[Recipient], Recipient], done: str
) -> HttpResponse:
    """A POST that decides on a recipient: the service's refusal in words, then back where the
    person came from (the queue or the recipient)."""
    recipient = selectors.recipient_get(environment=current_environment(request), pk=pk)
    back = (
        reverse("accounts:recipient_approvals")
        if request.POST.get("from") == "queue"
        else reverse("accounts:recipient_detail", args=[pk])
    )
    try:
        result = act(recipient)
    except StepUpRequired as exc:
        exc.next_url = back  # type: ignore[attr-defined]
        raise
    except ServiceError as exc:
        messages.error(request, exc.as_message())
        return redirect(back)
    messages.success(request, done)
    if result.pk != pk and request.POST.get("from") != "queue":
        return redirect("accounts:recipient_detail", pk=result.pk)
    return redirect(back)


@login_required
@require_POST
@permission_required(roles.RECIPIENTS_APPROVE, raise_exception=True)
def recipient_approve(request: HttpRequest, pk: int) -> HttpResponse:
    by = staff_of(request)
    return _decision(
        request,
        pk,
        lambda r: recipient_control.recipient_approve(recipient=r, by=by),
        gettext("Approved: the recipient can be paid."),
    )


@login_required
@require_POST
@permission_required(roles.RECIPIENTS_APPROVE, raise_exception=True)
def recipient_reject(request: HttpRequest, pk: int) -> HttpResponse:
    by = staff_of(request)
    form = RecipientRejectForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    return _decision(
        request,
        pk,
        lambda r: recipient_control.recipient_reject(recipient=r, by=by, reason=reason),
        gettext("Rejected."),
    )


@login_required
@require_POST
@permission_required(roles.ACCOUNTS_MANAGE, raise_exception=True)
def recipient_archive(request: HttpRequest, pk: int) -> HttpResponse:
    by = staff_of(request)
    form = RecipientArchiveForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    return _decision(
        request,
        pk,
        lambda r: recipient_control.recipient_archive(recipient=r, by=by, reason=reason),
        gettext("Archived: the recipient can no longer be paid."),
    )


@login_required
@permission_required(roles.ACCOUNTS_MANAGE, raise_exception=True)
def recipient_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Propose new details; they wait for a second person's approval (the old stay payable)."""
    recipient = selectors.recipient_get(environment=current_environment(request), pk=pk)
    form = RecipientEditForm(
        request.POST or None, initial=recipient_control.current_values(recipient)
    )
    if request.method == "POST" and form.is_valid():
        try:
            recipient_control.recipient_change_propose(
                recipient=recipient, by=staff_of(request), values=dict(form.cleaned_data)
            )
        except ServiceError as error:
            error.add_to_form(form, rename=RECIPIENT_ERROR_FIELDS)
        else:
            messages.success(
                request,
                gettext(
                    "The change waits for a second person's approval; until then the current "
                    "details stay payable."
                ),
            )
            return redirect("accounts:recipient_detail", pk=pk)
    return render(request, "accounts/recipient_edit.html", {"form": form, "recipient": recipient})
