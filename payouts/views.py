"""Payout pages: the list (filters, CSV export), the draft form, one payout with its panels."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from console.lists import is_htmx, list_template, page_of
from gateway.models import Environment
from gateway.selectors import environment_current
from payouts import selectors
from payouts.errors import (
    DuplicateNeedsConfirmation,
    PayoutInvalid,
    refusal_text,
    refusal_texts,
)
from payouts.forms import DRAFT_FIELDS, DocumentForm, PayoutDraftForm, PayoutFilterForm, SubmitForm
from payouts.models import Payout, PayoutDocument
from payouts.services import (
    document_add,
    document_remove,
    payout_draft_create,
    payout_draft_delete,
    payout_draft_update,
    payout_preview,
    payout_submit,
    submission_problems,
)
from staff.requests import staff_of
from staff.roles import PAYOUT_INITIATE

PAGE_SIZE = 50
CSV_COLUMNS = (
    "id", "created_at", "status", "maker", "virtual_account", "recipient", "rail", "mode",
    "amount", "currency", "total_fees", "recipient_amount", "recipient_currency", "quote_id",
    "reference", "upstream_id", "submitted_at",
)  # fmt: skip


def _environment(request: HttpRequest) -> Environment | None:
    return environment_current(user=request.user)


def _get_payout(request: HttpRequest, pk: int) -> Payout:
    try:
        return selectors.payout_detail(environment=_environment(request), pk=pk)
    except Payout.DoesNotExist:
        raise Http404("No such payout in this environment.") from None


def _filtered(request: HttpRequest) -> tuple[PayoutFilterForm, Any]:
    environment = _environment(request)
    makers = list(selectors.payout_makers(environment))
    form = PayoutFilterForm(request.GET or None, makers=[(str(m.pk), m.email) for m in makers])
    filters = form.cleaned_data if form.is_valid() else {}
    maker = next((m for m in makers if str(m.pk) == filters.get("maker")), None)
    payouts = selectors.payout_list(
        environment=environment,
        q=filters.get("q") or "",
        status=filters.get("status") or "",
        maker=maker,
        corridor=filters.get("corridor") or "",
        amount_min=filters.get("amount_min"),
        amount_max=filters.get("amount_max"),
        date_from=filters.get("date_from"),
        date_to=filters.get("date_to"),
    )
    return form, payouts


@login_required
def payout_list(request: HttpRequest) -> HttpResponse:
    user = staff_of(request)
    selectors.require_payout_reader(user)
    form, payouts = _filtered(request)
    page, query = page_of(request, payouts, PAGE_SIZE)
    context = {
        "form": form,
        "page": page,
        "query": query,
        "can_initiate": user.has_perm(PAYOUT_INITIATE),
    }
    return render(request, list_template(request, "payouts/payout_list.html"), context)


class _Echo:
    """csv.writer target that hands each line back instead of buffering it."""

    def write(self, value: str) -> str:
        return value


def _csv_rows(payouts: Any) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(CSV_COLUMNS)
    for payout in payouts.iterator(chunk_size=500):
        fees = payout.quote.total_fees if payout.quote else payout.preview_total_fees
        yield writer.writerow(
            [
                payout.pk,
                payout.created_at.isoformat(),
                payout.status,
                payout.maker.email,
                payout.virtual_account.upstream_id,
                payout.recipient.display_name,
                payout.recipient.account_type,
                payout.mode,
                f"{payout.amount:.2f}",
                payout.currency,
                "" if fees is None else f"{fees:.2f}",
                ""
                if payout.preview_recipient_amount is None
                else f"{payout.preview_recipient_amount:.2f}",
                payout.preview_recipient_currency,
                payout.quote.upstream_id if payout.quote else payout.preview_quote_id,
                payout.reference,
                payout.upstream_id or "",
                payout.submitted_at.isoformat() if payout.submitted_at else "",
            ]
        )


@login_required
def payout_export(request: HttpRequest) -> StreamingHttpResponse:
    """The filtered list as CSV, streamed row by row (a large export never sits in memory)."""
    selectors.require_payout_reader(staff_of(request))
    _, payouts = _filtered(request)
    response = StreamingHttpResponse(_csv_rows(payouts), content_type="text/csv")
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="payouts-{stamp}.csv"'
    return response


@login_required
def payout_new(request: HttpRequest) -> HttpResponse:
    user = staff_of(request)
    if not user.has_perm(PAYOUT_INITIATE):
        raise PermissionDenied
    environment = _environment(request)
    if request.method == "POST":
        form = PayoutDraftForm(request.POST, environment=environment)
        if environment is None:
            form.add_error(None, "Choose the environment you work in first.")
        elif form.is_valid():
            try:
                payout = payout_draft_create(by=user, environment=environment, values=form.values())
            except PayoutInvalid as exc:
                exc.add_to_form(form, rename=DRAFT_FIELDS)
            else:
                messages.success(request, f"Draft #{payout.pk} saved.")
                return redirect("payouts:detail", pk=payout.pk)
    else:
        form = PayoutDraftForm(initial=request.GET.dict(), environment=environment)
    return render(request, "payouts/payout_form.html", {"form": form, "payout": None})


@login_required
def payout_edit(request: HttpRequest, pk: int) -> HttpResponse:
    user = staff_of(request)
    payout = _get_payout(request, pk)
    if payout.maker_id != user.pk or not user.has_perm(PAYOUT_INITIATE):
        raise PermissionDenied
    environment = _environment(request)
    if request.method == "POST":
        form = PayoutDraftForm(request.POST, environment=environment)
        if form.is_valid():
            try:
                payout_draft_update(by=user, payout=payout, values=form.values())
            except PayoutInvalid as exc:
                exc.add_to_form(form, rename=DRAFT_FIELDS)
            else:
                messages.success(request, f"Draft #{payout.pk} saved.")
                return redirect("payouts:detail", pk=payout.pk)
    else:
        initial = {
            "virtual_account": payout.virtual_account_id,
            "recipient": payout.recipient_id,
            "amount": payout.amount,
            "quote": payout.quote_id,
            "reference": payout.reference,
            "memo": payout.memo,
            "internal_notes": payout.internal_notes,
            "client_markup_fixed_fee": payout.client_markup_fixed_fee,
            "client_markup_percentage_fee": payout.client_markup_percentage_fee,
            "client_markup_fx_markup": payout.client_markup_fx_markup,
            "payment_currency": payout.payment_currency,
            "payment_network": payout.payment_network,
        }
        form = PayoutDraftForm(initial=initial, environment=environment)
    return render(request, "payouts/payout_form.html", {"form": form, "payout": payout})


def detail_context(request: HttpRequest, payout: Payout, **extra: Any) -> dict[str, Any]:
    user = staff_of(request)
    is_maker = payout.maker_id == user.pk and user.has_perm(PAYOUT_INITIATE)
    can_edit = is_maker and payout.is_draft
    from payouts.approval_views import live_context

    return {
        # Issue 14's live region (approvals, OTP, deposit, timeline, audit).
        **live_context(request, payout),
        "payout": payout,
        "can_edit": can_edit,
        "problems": submission_problems(payout, now=timezone.now()) if can_edit else {},
        "document_form": extra.pop("document_form", None) or DocumentForm(),
        "submit_form": extra.pop("submit_form", None) or SubmitForm(),
        "now": timezone.now(),
        **extra,
    }


@login_required
def payout_detail(request: HttpRequest, pk: int) -> HttpResponse:
    selectors.require_payout_reader(staff_of(request))
    payout = _get_payout(request, pk)
    return render(request, "payouts/payout_detail.html", detail_context(request, payout))


def _panel(request: HttpRequest, pk: int, partial: str, **extra: Any) -> HttpResponse:
    payout = _get_payout(request, pk)
    context = detail_context(request, payout, **extra)
    if is_htmx(request):
        return render(request, f"payouts/payout_detail.html#{partial}", context)
    return render(request, "payouts/payout_detail.html", context)


@require_POST
@login_required
def payout_delete(request: HttpRequest, pk: int) -> HttpResponse:
    payout = _get_payout(request, pk)
    try:
        payout_draft_delete(by=staff_of(request), payout=payout)
    except PayoutInvalid as exc:
        messages.error(request, refusal_text(exc))
        return redirect("payouts:detail", pk=pk)
    messages.success(request, f"Draft #{pk} deleted.")
    return redirect("payouts:list")


@require_POST
@login_required
def payout_preview_view(request: HttpRequest, pk: int) -> HttpResponse:
    payout = _get_payout(request, pk)
    errors: list[str] = []
    try:
        payout_preview(
            by=staff_of(request), payout=payout, reserve=request.POST.get("reserve") == "1"
        )
    except PayoutInvalid as exc:
        errors = refusal_texts(exc, named=True)
    return _panel(request, pk, "preview", preview_errors=errors)


@require_POST
@login_required
def document_add_view(request: HttpRequest, pk: int) -> HttpResponse:
    payout = _get_payout(request, pk)
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
    return _panel(request, pk, "documents", document_form=form)


@require_POST
@login_required
def document_remove_view(request: HttpRequest, pk: int, document_pk: int) -> HttpResponse:
    document = get_object_or_404(PayoutDocument, pk=document_pk, payout_id=pk)
    _get_payout(request, pk)  # 404 outside the environment
    errors: list[str] = []
    try:
        document_remove(by=staff_of(request), document=document)
    except PayoutInvalid as exc:
        errors = refusal_texts(exc)
    return _panel(request, pk, "documents", document_errors=errors)


@require_POST
@login_required
def payout_submit_view(request: HttpRequest, pk: int) -> HttpResponse:
    payout = _get_payout(request, pk)
    form = SubmitForm(request.POST)
    form.is_valid()
    try:
        payout_submit(
            by=staff_of(request),
            payout=payout,
            confirm_duplicate=bool(form.cleaned_data.get("confirm_duplicate")),
        )
    except PayoutInvalid as exc:
        needs_confirm = isinstance(exc, DuplicateNeedsConfirmation)
        errors = refusal_texts(exc, named=True)
        return _panel(request, pk, "submit", submit_errors=errors, needs_confirm=needs_confirm)
    messages.success(request, f"Payout #{pk} submitted for approval.")
    if is_htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = request.build_absolute_uri(f"/payouts/{pk}/")
        return response
    return redirect("payouts:detail", pk=pk)
