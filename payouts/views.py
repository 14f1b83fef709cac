"""The payout pages: the list (filters, CSV export), one payout with its panels and live region."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from accounts.models import RecipientKind
from console.exports import Cell, csv_response
from console.lists import filters_by_maker, is_htmx, list_template, page_of
from gateway.models import Environment
from gateway.selectors import environment_current
from payouts import page_panels, selectors
from payouts.approval.forms import RejectForm, WithdrawForm
from payouts.drafts.checks import submission_problems
from payouts.drafts.documents import document_open
from payouts.drafts.forms import DocumentForm, SubmitForm
from payouts.errors import REFUSALS, refusal_text
from payouts.evidence.services import can_download_evidence
from payouts.forms import PayoutFilterForm
from payouts.models import Payout
from payouts.pages import document_file_response, payout_of_request
from payouts.release.step_context import release_step_context
from payouts.selectors import require_payout_reader
from staff.models import StaffUser
from staff.requests import staff_of
from staff.roles import PAYOUT_INITIATE
from staff.step_up import StepUpRequired

PAGE_SIZE = 50
# The payout page's live region: its whole content, one partial of the page's template.
LIVE_REGION = "payouts/payout_detail.html#page"
CSV_COLUMNS = (
    "id", "created_at", "status", "maker", "virtual_account", "recipient", "rail", "mode",
    "amount", "currency", "total_fees", "recipient_amount", "recipient_currency", "quote_id",
    "reference", "upstream_id", "submitted_at",
)  # fmt: skip


def _environment(request: HttpRequest) -> Environment | None:
    return environment_current(user=request.user)


def _filtered(request: HttpRequest) -> tuple[PayoutFilterForm, Any]:
    environment = _environment(request)
    makers = selectors.payout_makers(environment)
    form, filters, maker = filters_by_maker(request, PayoutFilterForm, makers)
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


# What each CSV row reads: plain values of the payout and the rows it points to (one query,
# streamed in chunks; no model instances, so a row costs a tuple, not a wide Payout).
_CSV_VALUES = (
    "pk", "created_at", "status", "maker__email", "virtual_account__upstream_id",
    "recipient__kind", "recipient__first_name", "recipient__last_name",
    "recipient__company_name", "recipient__account_type", "mode", "amount", "currency",
    "quote_id", "quote__total_fees", "preview_total_fees", "preview_recipient_amount",
    "preview_recipient_currency", "quote__upstream_id", "preview_quote_id", "reference",
    "upstream_id", "submitted_at",
)  # fmt: skip
CSV_CHUNK = 2000


def _money(value: Decimal | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _csv_rows(payouts: Any) -> Iterator[list[Cell]]:
    rows = payouts.values_list(*_CSV_VALUES).iterator(chunk_size=CSV_CHUNK)
    for (
        pk, created_at, status, maker, account, kind, first_name, last_name, company, rail,
        mode, amount, currency, quote_id, quote_fees, preview_fees, recipient_amount,
        recipient_currency, quote_upstream_id, preview_quote_id, reference, upstream_id,
        submitted_at,
    ) in rows:  # fmt: skip
        quoted = quote_id is not None
        recipient = (
            company if kind == RecipientKind.COMPANY else f"{first_name} {last_name}".strip()
        )
        yield [
            pk,
            created_at.isoformat(),
            status,
            maker,
            account,
            recipient,
            rail,
            mode,
            f"{amount:.2f}",
            currency,
            _money(quote_fees if quoted else preview_fees),
            _money(recipient_amount),
            recipient_currency,
            quote_upstream_id if quoted else preview_quote_id,
            reference,
            upstream_id or "",
            submitted_at.isoformat() if submitted_at else "",
        ]


@login_required
def payout_export(request: HttpRequest) -> StreamingHttpResponse:
    """The filtered list as CSV, streamed row by row, formula-safe (console.exports)."""
    selectors.require_payout_reader(staff_of(request))
    _, payouts = _filtered(request)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    return csv_response(CSV_COLUMNS, _csv_rows(payouts), filename=f"payouts-{stamp}.csv")


def page_context(request: HttpRequest, payout: Payout, **extra: Any) -> dict[str, Any]:
    """Everything the payout page shows this person. The page is one live region, so an action's
    answer and a live update re-render all of it: no fact can be left behind (docs/console.md)."""
    user = staff_of(request)
    now = timezone.now()
    can_edit = payout.is_draft and payout.maker_id == user.pk and user.has_perm(PAYOUT_INITIATE)
    approvals = page_panels.approvals_context(user, payout)
    # The release step (code sent, tries, expiry, any sandbox hint): payouts.release.views.
    release = release_step_context(request, payout)
    return {
        "payout": payout,
        "now": now,
        "can_edit": can_edit,
        "can_download_evidence": can_download_evidence(user),
        "problems": submission_problems(payout, now=now) if can_edit else {},
        "document_form": extra.pop("document_form", None) or DocumentForm(),
        "submit_form": extra.pop("submit_form", None) or SubmitForm(),
        "reject_form": extra.pop("reject_form", None) or RejectForm(),
        "withdraw_form": extra.pop("withdraw_form", None) or WithdrawForm(),
        **approvals,
        **page_panels.actions_context(user, payout),
        **page_panels.deposit_context(payout, now=now),
        **page_panels.records_context(payout),
        **release,
        "next_action": page_panels.next_action(payout, approvals=approvals, release=release),
        **extra,
    }


@login_required
def payout_detail(request: HttpRequest, pk: int) -> HttpResponse:
    selectors.require_payout_reader(staff_of(request))
    payout = payout_of_request(request, pk)
    return render(request, "payouts/payout_detail.html", page_context(request, payout))


@login_required
def document_open_view(request: HttpRequest, pk: int, document_pk: int) -> FileResponse:
    """A supporting document of the payout, as a download, for whoever may read the payout;
    the opening is recorded (approvers see who opened what before approving)."""
    user = staff_of(request)
    selectors.require_payout_reader(user)
    payout = payout_of_request(request, pk)
    document = document_open(by=user, payout=payout, document_pk=document_pk)
    return document_file_response(document)


def panel_response(request: HttpRequest, pk: int, partial: str, **extra: Any) -> HttpResponse:
    payout = payout_of_request(request, pk)
    context = page_context(request, payout, **extra)
    if is_htmx(request):
        return render(request, f"payouts/payout_detail.html#{partial}", context)
    return render(request, "payouts/payout_detail.html", context)


def live_region(request: HttpRequest, pk: int, **extra: Any) -> HttpResponse:
    """The live region after an action (HTMX), or back to the payout page."""
    payout = payout_of_request(request, pk)
    context = page_context(request, payout, **extra)
    if is_htmx(request):
        return render(request, LIVE_REGION, context)
    return redirect("payouts:detail", pk=pk)


@login_required
def payout_live(request: HttpRequest, pk: int) -> HttpResponse:
    """The live region of the payout page (all of it), re-fetched when the payout changes."""
    require_payout_reader(staff_of(request))
    payout = payout_of_request(request, pk)
    return render(request, LIVE_REGION, page_context(request, payout))


def refused_as_person(exc: Exception) -> bool:
    """A refusal about who is asking (their role, or a rule about them such as approving one's
    own payout): pages answer it 403, as the API does, never a redirect that reads as success."""
    return isinstance(exc, PermissionDenied) or getattr(exc, "status", None) == 403


def with_status(response: HttpResponse, status: int) -> HttpResponse:
    response.status_code = status
    return response


def forbidden_page(request: HttpRequest, pk: int) -> HttpResponse:
    """The payout page again, answering 403; its message says why (messages.error first)."""
    return with_status(payout_detail(request, pk), 403)


def live_action(
    request: HttpRequest,
    pk: int,
    act: Callable[[Payout, StaffUser], object],
    ok: str,
    **form_errors: Any,
) -> HttpResponse:
    """Run a live-region action, `act(payout, person)` (a service call); a refusal is said in
    the region, and as a message when the page is re-read whole (always for a permission); a
    refusal of the person is 403 (`refused_as_person`)."""
    payout = payout_of_request(request, pk)
    try:
        act(payout, staff_of(request))
    except StepUpRequired:
        raise  # staff.middleware.StepUpMiddleware sends the person to the step-up prompt
    except REFUSALS as exc:
        error = refusal_text(exc)
        if isinstance(exc, PermissionDenied) or not is_htmx(request):
            messages.error(request, error)
        if refused_as_person(exc):
            if not is_htmx(request):
                return forbidden_page(request, pk)
            return with_status(live_region(request, pk, action_error=error, **form_errors), 403)
        return live_region(request, pk, action_error=error, **form_errors)
    if not is_htmx(request):
        messages.success(request, ok)
    return live_region(request, pk, action_ok=ok)
