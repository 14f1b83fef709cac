"""The statements page (account, period, the statement on screen, CSV and PDF, balance as of a
day, the daily balance history beside the upstream's readings), the fees and FX report, and a
completed payout's receipt. For books.view_books (finance makers, approvers, the auditor)."""

from __future__ import annotations

import io
from datetime import date

from django.contrib.auth.decorators import login_required, permission_required
from django.http import (
    FileResponse,
    HttpRequest,
    HttpResponse,
    QueryDict,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.shortcuts import render

from accounts.models import VirtualAccount, VirtualAccountMode
from books.statements import fees, history, pdf, receipts, statement
from books.statements.forms import FeesReportForm, StatementForm, last_month, month_to_date
from books.statements.receipt_pdf import receipt_pdf_write
from console.exports import csv_response
from gateway.selectors import environment_choices, environment_current
from payouts.pages import payout_of_request
from staff.errors import ServiceError
from staff.requests import staff_of
from staff.roles import BOOKS_VIEW


def pdf_response(content: bytes, filename: str) -> FileResponse:
    response = FileResponse(
        io.BytesIO(content), as_attachment=True, filename=filename, content_type="application/pdf"
    )
    response["Cache-Control"] = "private, no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response


def statement_pdf(built: statement.Statement) -> bytes:
    out = io.BytesIO()
    pdf.statement_pdf_write(built, out)
    return out.getvalue()


def statement_csv(built: statement.Statement) -> StreamingHttpResponse:
    """The header block then the lines, streamed (its first row stands as the CSV's header)."""
    rows = statement.statement_csv_rows(built)
    first = [str(cell) for cell in next(rows)]
    return csv_response(first, rows, filename=f"{built.filename_stem}.csv")


def receipt_pdf(receipt: receipts.Receipt) -> bytes:
    out = io.BytesIO()
    receipt_pdf_write(receipt, out)
    return out.getvalue()


def _accounts(request: HttpRequest) -> list[VirtualAccount]:
    environment = environment_current(user=request.user)
    return list(
        VirtualAccount.objects.filter(environment=environment, mode=VirtualAccountMode.FIAT)
        .select_related("end_user", "environment")
        .order_by("end_user__last_name", "pk")
    )


@login_required
@permission_required(BOOKS_VIEW, raise_exception=True)
def statements_page(request: HttpRequest) -> HttpResponseBase:
    """GET /books/statements/: pick an account and a period; ?format=csv|pdf downloads it."""
    accounts = _accounts(request)
    first, last = month_to_date()
    data = request.GET.copy() if request.GET else None
    if data is None and len(accounts) == 1:
        # One account: its statement, month to date, without a pick.
        data = QueryDict(mutable=True)
        data.update({"account": str(accounts[0].pk), "start": str(first), "end": str(last)})
    form = StatementForm(data, accounts=accounts, initial={"start": first, "end": last})
    va = form.account_chosen()
    previous = last_month()
    context: dict[str, object] = {
        "form": form,
        "accounts": accounts,
        "query": data.urlencode() if data is not None else "",
        # Nothing picked yet: each account with its balance and a statement one click away.
        "last_month": {"start": previous[0], "end": previous[1]},
        "month_to_date": {"start": first, "end": last},
    }
    if va is not None:
        user = staff_of(request)
        start, end = form.cleaned_data["start"], form.cleaned_data["end"]
        built = statement.statement_build(
            virtual_account=va, start=start, end=end, by=user, refresh=True
        )
        kind = request.GET.get("format")
        if kind == "csv":
            return statement_csv(built)
        if kind == "pdf":
            return pdf_response(statement_pdf(built), f"{built.filename_stem}.pdf")
        on: date = form.cleaned_data.get("on") or end
        context |= {
            "statement": built,
            "on": on,
            "balance_on": history.balance_on(virtual_account=va, day=on, by=user),
            "history": history.balance_history(virtual_account=va, start=start, end=end, by=user),
        }
    return render(request, "books/statements/statements.html", context)


@login_required
@permission_required(BOOKS_VIEW, raise_exception=True)
def fees_report_page(request: HttpRequest) -> HttpResponseBase:
    """GET /books/fees/: fees and FX spread per corridor; ?format=csv downloads it."""
    user = staff_of(request)
    environments = {str(e.pk): e for e in environment_choices(user=request.user)}
    first, last = month_to_date()
    probe = FeesReportForm(
        request.GET or None,
        environments=[(k, e.name) for k, e in environments.items()],
        corridors=[request.GET.get("corridor", "")] if request.GET.get("corridor") else [],
    )
    valid = probe.is_valid() if probe.is_bound else False
    cleaned = probe.cleaned_data if probe.is_bound else {}
    start = cleaned.get("start") or first
    end = cleaned.get("end") or last
    environment = environments.get(cleaned.get("environment") or "")
    report = fees.fees_report(
        environment=environment,
        start=start,
        end=end,
        corridor=cleaned.get("corridor") or "",
        by=user,
    )
    form = FeesReportForm(
        request.GET or None,
        environments=[(k, e.name) for k, e in environments.items()],
        corridors=sorted({*report.corridors, *([report.corridor] if report.corridor else [])}),
        initial={"start": first, "end": last},
    )
    if valid and request.GET.get("format") == "csv":
        return csv_response(
            fees.FEES_CSV_HEADER,
            fees.fees_csv_rows(report),
            filename=f"fees-fx-{start:%Y%m%d}-{end:%Y%m%d}.csv",
        )
    context = {"form": form, "report": report, "query": request.GET.urlencode()}
    return render(request, "books/statements/fees_report.html", context)


@login_required
@permission_required(BOOKS_VIEW, raise_exception=True)
def receipt_download(request: HttpRequest, pk: int) -> HttpResponseBase:
    """GET /books/receipts/<payout pk>/: the receipt PDF of a completed payout (409 otherwise)."""
    payout = payout_of_request(request, pk)
    try:
        receipt = receipts.receipt_build(payout=payout, by=staff_of(request))
    except ServiceError as exc:
        return HttpResponse(exc.message, status=exc.status, content_type="text/plain")
    return pdf_response(receipt_pdf(receipt), receipt.filename)
