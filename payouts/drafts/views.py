"""Draft pages: the form (new, edit), delete, preview, documents, send for approval."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from console.lists import is_htmx
from gateway.selectors import environment_current
from payouts.drafts.documents import document_add, document_remove
from payouts.drafts.forms import DRAFT_FIELDS, DocumentForm, PayoutDraftForm, SubmitForm
from payouts.drafts.preview import payout_preview
from payouts.drafts.services import (
    DraftValues,
    payout_draft_create,
    payout_draft_delete,
    payout_draft_update,
    payout_send_for_approval,
)
from payouts.errors import DuplicateNeedsConfirmation, PayoutInvalid, refusal_text, refusal_texts
from payouts.models import Payout, PayoutChannel, PayoutDocument
from payouts.pages import payout_of_request
from payouts.views import panel_response
from staff.requests import staff_of
from staff.roles import PAYOUT_INITIATE

DRAFT_INITIAL = (
    "virtual_account", "recipient", "amount", "quote", "reference", "memo", "internal_notes",
    "client_markup_fixed_fee", "client_markup_percentage_fee", "client_markup_fx_markup",
    "payment_currency", "payment_network",
)  # fmt: skip


def _draft_form_page(
    request: HttpRequest,
    *,
    payout: Payout | None,
    initial: dict[str, Any],
    save: Callable[[DraftValues], Payout],
) -> HttpResponse:
    """The draft form: shown, or posted and saved by `save` (errors on their fields)."""
    environment = environment_current(user=request.user)
    form = PayoutDraftForm(initial=initial, environment=environment)
    if request.method == "POST":
        form = PayoutDraftForm(request.POST, environment=environment)
        if environment is None:
            form.add_error(None, gettext("Choose the environment you work in first."))
        elif form.is_valid():
            try:
                saved = save(form.values())
            except PayoutInvalid as exc:
                exc.add_to_form(form, rename=DRAFT_FIELDS)
            else:
                messages.success(request, gettext("Draft #%(pk)s saved.") % {"pk": saved.pk})
                return redirect("payouts:detail", pk=saved.pk)
    return render(request, "payouts/payout_form.html", {"form": form, "payout": payout})


@login_required
def payout_new(request: HttpRequest) -> HttpResponse:
    user = staff_of(request)
    if not user.has_perm(PAYOUT_INITIATE):
        raise PermissionDenied
    environment = environment_current(user=request.user)

    def save(values: DraftValues) -> Payout:
        assert environment is not None
        return payout_draft_create(
            by=user, environment=environment, values=values, channel=PayoutChannel.PAGE
        )

    return _draft_form_page(request, payout=None, initial=request.GET.dict(), save=save)


@login_required
def payout_edit(request: HttpRequest, pk: int) -> HttpResponse:
    user = staff_of(request)
    payout = payout_of_request(request, pk)
    if payout.maker_id != user.pk or not user.has_perm(PAYOUT_INITIATE):
        raise PermissionDenied
    initial = {
        name: getattr(
            payout, f"{name}_id" if name in ("virtual_account", "recipient", "quote") else name
        )
        for name in DRAFT_INITIAL
    }
    return _draft_form_page(
        request,
        payout=payout,
        initial=initial,
        save=lambda values: payout_draft_update(by=user, payout=payout, values=values),
    )


@require_POST
@login_required
def payout_delete(request: HttpRequest, pk: int) -> HttpResponse:
    payout = payout_of_request(request, pk)
    try:
        payout_draft_delete(by=staff_of(request), payout=payout)
    except PayoutInvalid as exc:
        messages.error(request, refusal_text(exc))
        return redirect("payouts:detail", pk=pk)
    messages.success(request, gettext("Draft #%(pk)s deleted.") % {"pk": pk})
    return redirect("payouts:list")


@require_POST
@login_required
def payout_preview_view(request: HttpRequest, pk: int) -> HttpResponse:
    payout = payout_of_request(request, pk)
    errors: list[str] = []
    try:
        payout_preview(
            by=staff_of(request), payout=payout, reserve=request.POST.get("reserve") == "1"
        )
    except PayoutInvalid as exc:
        errors = refusal_texts(exc, named=True)
    return panel_response(request, pk, "preview", preview_errors=errors)


@require_POST
@login_required
def document_add_view(request: HttpRequest, pk: int) -> HttpResponse:
    payout = payout_of_request(request, pk)
    form = DocumentForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            document_add(
                by=staff_of(request),
                payout=payout,
                upload=form.cleaned_data["file"],
                kind=form.cleaned_data["kind"],
            )
        except PayoutInvalid as exc:
            exc.add_to_form(form)
        else:
            form = DocumentForm()
    return panel_response(request, pk, "documents", document_form=form)


@require_POST
@login_required
def document_remove_view(request: HttpRequest, pk: int, document_pk: int) -> HttpResponse:
    document = get_object_or_404(PayoutDocument, pk=document_pk, payout_id=pk)
    payout_of_request(request, pk)  # 404 outside the environment
    errors: list[str] = []
    try:
        document_remove(by=staff_of(request), document=document)
    except PayoutInvalid as exc:
        errors = refusal_texts(exc)
    return panel_response(request, pk, "documents", document_errors=errors)


@require_POST
@login_required
def send_for_approval_view(request: HttpRequest, pk: int) -> HttpResponse:
    payout = payout_of_request(request, pk)
    form = SubmitForm(request.POST)
    form.is_valid()
    try:
        payout_send_for_approval(
            by=staff_of(request),
            payout=payout,
            confirm_duplicate=bool(form.cleaned_data.get("confirm_duplicate")),
            channel=PayoutChannel.PAGE,
        )
    except PayoutInvalid as exc:
        needs_confirm = isinstance(exc, DuplicateNeedsConfirmation)
        errors = refusal_texts(exc, named=True)
        return panel_response(
            request, pk, "submit", submit_errors=errors, needs_confirm=needs_confirm
        )
    messages.success(request, gettext("Payout #%(pk)s submitted for approval.") % {"pk": pk})
    if is_htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = request.build_absolute_uri(f"/payouts/{pk}/")
        return response
    return redirect("payouts:detail", pk=pk)
