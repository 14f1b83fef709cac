"""The payout pages: the list (filters, CSV export), one payout with its panels and live region."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import RecipientKind
from console.exports import Cell, csv_response
from console.lists import filters_by_maker, is_htmx, list_template, page_of
from gateway.models import Environment
from gateway.selectors import environment_current
from payouts import selectors
from payouts.approval.forms import RejectForm, WithdrawForm
from payouts.approval.rules import approval_decide
from payouts.approval.selectors import approvals_history, chain_display, valid_approvals
from payouts.approval.services import (
    CANCELLABLE,
    approval_facts,
    approval_released,
    approver_roles,
)
from payouts.drafts.checks import submission_problems
from payouts.drafts.documents import document_open, documents_opened_by
from payouts.drafts.forms import DocumentForm, SubmitForm
from payouts.errors import REFUSALS, refusal_text
from payouts.evidence.services import can_download_evidence
from payouts.forms import PayoutFilterForm
from payouts.models import Payout, PayoutStatus
from payouts.pages import document_file_response, payout_of_request
from payouts.qr import deposit_qr_svg
from payouts.release.step_context import release_step_context
from payouts.release.waiting import wait_text
from payouts.selectors import require_payout_reader
from payouts.tracking.timeline import timeline
from staff.models import AuditEntry, StaffUser
from staff.requests import staff_of
from staff.roles import PAYOUT_APPROVE, PAYOUT_INITIATE
from staff.step_up import StepUpRequired

S = PayoutStatus


PAGE_SIZE = 50
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


def detail_context(request: HttpRequest, payout: Payout, **extra: Any) -> dict[str, Any]:
    user = staff_of(request)
    is_maker = payout.maker_id == user.pk and user.has_perm(PAYOUT_INITIATE)
    can_edit = is_maker and payout.is_draft
    return {
        # The live region (approvals, the release step, deposit, timeline, audit).
        **live_context(request, payout),
        "payout": payout,
        "can_edit": can_edit,
        "can_download_evidence": can_download_evidence(user),
        "problems": submission_problems(payout, now=timezone.now()) if can_edit else {},
        "document_form": extra.pop("document_form", None) or DocumentForm(),
        "submit_form": extra.pop("submit_form", None) or SubmitForm(),
        "now": timezone.now(),
        **extra,
    }


@login_required
def payout_detail(request: HttpRequest, pk: int) -> HttpResponse:
    selectors.require_payout_reader(staff_of(request))
    payout = payout_of_request(request, pk)
    return render(request, "payouts/payout_detail.html", detail_context(request, payout))


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
    context = detail_context(request, payout, **extra)
    if is_htmx(request):
        return render(request, f"payouts/payout_detail.html#{partial}", context)
    return render(request, "payouts/payout_detail.html", context)


def live_context(request: HttpRequest, payout: Payout, **extra: Any) -> dict[str, Any]:
    user = staff_of(request)
    now = timezone.now()
    facts = approval_facts(payout)
    roles = approver_roles(user)
    decision = approval_decide(
        facts, approver_id=user.pk, has_permission=user.has_perm(PAYOUT_APPROVE), roles=roles
    )
    is_approver = user.has_perm(PAYOUT_APPROVE)
    fills_a_step = is_approver or any(step.role in roles for step in facts.steps() if step.role)
    deposit: dict[str, Any] = payout.deposit_instructions or {}
    deposit_expires = None
    if deposit.get("expires_at"):
        deposit_expires = datetime.fromisoformat(str(deposit["expires_at"]))
    approvals = valid_approvals(payout)
    documents = list(payout.documents.all())
    opened = documents_opened_by(payout)
    history = list(approvals_history(payout))
    for approval in history:  # shown beside each approval: did they open the documents?
        setattr(approval, "documents_opened", len(opened.get(approval.approver_id, ())))  # noqa: B010
    return {
        "payout": payout,
        "now": now,
        "documents_total": len(documents),
        "documents_opened_by_me": opened.get(user.pk, set()),
        "documents_not_opened": [d for d in documents if d.pk not in opened.get(user.pk, ())],
        "approvals": approvals,
        "approval_count_label": gettext("%(given)d of %(required)d")
        % {"given": len(approvals), "required": payout.approvals_required},
        "approvals_history": history,
        "can_approve": decision.allowed,
        "approve_refusal": decision.message
        if fills_a_step and payout.status == S.PENDING_APPROVAL
        else "",
        "approval_chain_label": chain_display(facts.steps()),
        "can_withdraw": any(a.approver_id == user.pk for a in approvals)
        and payout.status in (S.PENDING_APPROVAL, S.APPROVED)
        and not approval_released(payout),
        "can_reject": is_approver
        and payout.status == S.PENDING_APPROVAL
        and user.pk not in (payout.maker_id, payout.recipient.created_by_id),
        "can_cancel": payout.status in CANCELLABLE
        and (is_approver or (user.pk == payout.maker_id and user.has_perm(PAYOUT_INITIATE))),
        "can_resend": is_approver and payout.status == S.SUBMITTING,
        "can_requote": user.pk == payout.maker_id
        and user.has_perm(PAYOUT_INITIATE)
        and payout.status in (S.PENDING_APPROVAL, S.APPROVED)
        and bool(payout.preview_quote_id)
        and not payout.quote_id,
        "deposit": deposit,
        "deposit_qr": deposit_qr_svg(deposit["wallet_address"])
        if deposit.get("wallet_address")
        else "",
        "deposit_expires": deposit_expires,
        "deposit_expired": bool(deposit_expires and deposit_expires <= now),
        "timeline_rows": timeline(payout),
        # While the gateway retries (the recovery's wait is said by initiation_error).
        "upstream_wait": wait_text(payout) if payout.upstream_wait_attempt else "",
        "audit": AuditEntry.objects.filter(target_type="payouts.payout", target_id=str(payout.pk))
        .select_related("actor")
        .order_by("at", "pk"),
        "reject_form": extra.pop("reject_form", None) or RejectForm(),
        "withdraw_form": extra.pop("withdraw_form", None) or WithdrawForm(),
        # The release step (code sent, tries, expiry, any sandbox hint): payouts.release.views.
        **release_step_context(request, payout),
        **extra,
    }


def live_region(request: HttpRequest, pk: int, **extra: Any) -> HttpResponse:
    """The live region after an action (HTMX), or back to the payout page."""
    payout = payout_of_request(request, pk)
    context = live_context(request, payout, **extra)
    if is_htmx(request):
        return render(request, "payouts/payout_live.html", context)
    return redirect("payouts:detail", pk=pk)


@login_required
def payout_live(request: HttpRequest, pk: int) -> HttpResponse:
    """The live region of the payout page, re-fetched when the payout changes."""
    require_payout_reader(staff_of(request))
    payout = payout_of_request(request, pk)
    return render(request, "payouts/payout_live.html", live_context(request, payout))


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
