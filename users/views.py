"""End-user pages: list with filters, create, detail (KYC, timeline), edit, the KYC queue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from console.lists import list_template, page_of
from gateway.models import Environment
from gateway.selectors import environment_current
from staff import roles
from staff.errors import ServiceError
from staff.requests import staff_of
from users import kyc, selectors, services
from users.forms import (
    EndUserEditForm,
    EndUserFilterForm,
    EndUserForm,
    KycNoteForm,
    KycQueueFilterForm,
    KycReviewForm,
)
from users.models import EndUser
from users.validation import country_name, reason_in_words


def current_environment(request: HttpRequest) -> Environment:
    environment = environment_current(user=request.user)
    if environment is None:
        raise PermissionDenied(gettext("No upstream environment is configured yet: ask an admin."))
    return environment


def sandbox_installed() -> bool:
    """Sandbox-only actions (emulator control) are offered only where the app is installed."""
    from django.apps import apps

    return apps.is_installed("sandbox")


def directory_list_view(
    *, filter_form: type[forms.Form], rows: Callable[..., QuerySet[Any]], template: str
) -> Callable[[HttpRequest], HttpResponse]:
    """A list page of the current environment for directory readers: the filter form's valid
    choices go to `rows` by name (`q` is the search), one page of the result is shown (only the
    results for HTMX)."""

    @login_required
    @permission_required(roles.DIRECTORY_VIEW, raise_exception=True)
    def view(request: HttpRequest) -> HttpResponse:
        environment = current_environment(request)
        form = filter_form(request.GET or None)
        filters: dict[str, Any] = {}
        if form.is_valid():
            filters = {("search" if k == "q" else k): v for k, v in form.cleaned_data.items()}
        page, query = page_of(request, rows(environment=environment, **filters))
        context = {"form": form, "page": page, "query": query, "environment": environment}
        return render(request, list_template(request, template), context)

    return view


end_user_list = directory_list_view(
    filter_form=EndUserFilterForm, rows=selectors.end_user_list, template="users/list.html"
)


@login_required
@permission_required(roles.END_USERS_MANAGE, raise_exception=True)
def end_user_create(request: HttpRequest) -> HttpResponse:
    environment = current_environment(request)
    form = EndUserForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        request_key = data.pop("request_key")
        try:
            user = services.end_user_create(
                environment=environment, by=staff_of(request), request_key=request_key, **data
            )
        except ServiceError as error:
            error.add_to_form(form)
        else:
            messages.success(
                request, gettext("%(name)s was created upstream.") % {"name": user.display_name}
            )
            return redirect("users:detail", pk=user.pk)
    return render(request, "users/form.html", {"form": form, "environment": environment})


@login_required
@permission_required(roles.DIRECTORY_VIEW, raise_exception=True)
def end_user_detail(request: HttpRequest, pk: int) -> HttpResponse:
    environment = current_environment(request)
    user = selectors.end_user_detail(environment=environment, pk=pk)
    return render(request, "users/detail.html", _detail_context(request, user))


def _detail_context(request: HttpRequest, user: EndUser, **extra: Any) -> dict[str, Any]:
    return {
        "end_user": user,
        "country_name": country_name(user.country),
        "reasons_text": [reason_in_words(code) for code in user.reasons],
        "note_form": extra.pop("note_form", KycNoteForm()),
        "review_form": extra.pop("review_form", KycReviewForm()),
        "can_manage": request.user.has_perm(roles.END_USERS_MANAGE),
        "can_review": request.user.has_perm(roles.KYC_REVIEW),
        "can_open_accounts": request.user.has_perm(roles.ACCOUNTS_MANAGE),
        "sandbox": sandbox_installed(),
        **extra,
    }


@login_required
@permission_required(roles.END_USERS_MANAGE, raise_exception=True)
def end_user_edit(request: HttpRequest, pk: int) -> HttpResponse:
    environment = current_environment(request)
    user = selectors.end_user_get(environment=environment, pk=pk)
    initial = {name: getattr(user, name) for name in services.EDITABLE_FIELDS}
    form = EndUserEditForm(request.POST or None, initial=initial)
    identity_warning: list[str] = []
    if request.method == "POST" and form.is_valid():
        values = dict(form.cleaned_data)
        confirm = values.pop("confirm_reverification")
        try:
            user = services.end_user_update(
                end_user=user, by=staff_of(request), values=values, confirm_reverification=confirm
            )
        except ServiceError as error:
            if error.code == "reverification_required":
                identity_warning = [e.field.replace("_", " ") for e in error.errors]
                form.add_error("confirm_reverification", error.message)
            else:
                error.add_to_form(form)
        else:
            messages.success(request, gettext("The changes were sent upstream."))
            return redirect("users:detail", pk=user.pk)
    return render(
        request,
        "users/edit.html",
        {"form": form, "end_user": user, "identity_warning": identity_warning},
    )


@login_required
@require_POST
@permission_required(roles.DIRECTORY_VIEW, raise_exception=True)
def end_user_refresh(request: HttpRequest, pk: int) -> HttpResponse:
    user = selectors.end_user_get(environment=current_environment(request), pk=pk)
    try:
        services.end_user_refresh(end_user=user, by=staff_of(request))
    except ServiceError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, gettext("Refreshed from the upstream."))
    return redirect("users:detail", pk=pk)


@login_required
@require_POST
@permission_required(roles.KYC_REVIEW, raise_exception=True)
def kyc_note(request: HttpRequest, pk: int) -> HttpResponse:
    return _kyc_action(request, pk, note=True)


@login_required
@require_POST
@permission_required(roles.KYC_REVIEW, raise_exception=True)
def kyc_reviewed(request: HttpRequest, pk: int) -> HttpResponse:
    return _kyc_action(request, pk, note=False)


def _kyc_action(request: HttpRequest, pk: int, *, note: bool) -> HttpResponse:
    environment = current_environment(request)
    user = selectors.end_user_get(environment=environment, pk=pk)
    form: KycNoteForm | KycReviewForm = (
        KycNoteForm(request.POST) if note else KycReviewForm(request.POST)
    )
    if form.is_valid():
        try:
            if note:
                kyc.kyc_note_add(
                    end_user=user, by=staff_of(request), text=form.cleaned_data["text"]
                )
            else:
                kyc.kyc_mark_reviewed(
                    end_user=user, by=staff_of(request), reason=form.cleaned_data["reason"]
                )
        except ServiceError as error:
            error.add_to_form(form)
        else:
            messages.success(
                request, gettext("Note saved.") if note else gettext("Marked reviewed.")
            )
            back = request.POST.get("next", "")
            if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
                return redirect(back)
            return redirect("users:detail", pk=pk)
    user = selectors.end_user_detail(environment=environment, pk=pk)
    extra = {"note_form": form} if note else {"review_form": form}
    return render(request, "users/detail.html", _detail_context(request, user, **extra), status=400)


@login_required
@permission_required(roles.KYC_REVIEW, raise_exception=True)
def kyc_queue(request: HttpRequest) -> HttpResponse:
    environment = current_environment(request)
    form = KycQueueFilterForm(request.GET or None)
    data = form.cleaned_data if form.is_valid() else {}
    reviewed = data.get("reviewed") or ("no" if "reviewed" not in request.GET else "")
    rows = selectors.kyc_queue(
        environment=environment,
        verification_status=data.get("verification_status", ""),
        reviewed=reviewed if reviewed in ("yes", "no") else "",
    )
    page, query = page_of(request, rows)
    for user in page:  # the upstream's reason codes, in the words the end user's page uses
        user.reasons_text = [reason_in_words(code) for code in user.reasons]
    return render(
        request,
        "users/kyc_queue.html",
        {"form": form, "page": page, "query": query, "review_form": KycReviewForm()},
    )
