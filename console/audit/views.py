"""The audit trail's pages: the filtered list, one entry with its before/after diff, the CSV
export of the filtered list, and the chain verification. Auditors and admins (view_audit_log)."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone

from console.audit import selectors
from console.audit.diff import before_after, changed_keys, diff_rows, readable
from console.audit.forms import AuditFilterForm
from console.exports import csv_response
from console.lists import list_template, page_of
from staff.audit_chain import chain_verify
from staff.roles import AUDIT_LOG_VIEW

PAGE_SIZE = 50


def _filtered(request: HttpRequest) -> tuple[AuditFilterForm, selectors.AuditFilters]:
    form = AuditFilterForm(request.GET or None, people=selectors.audit_people())
    if form.is_bound:
        form.is_valid()  # a bad filter shows its error; the valid ones still apply
    return form, form.filters()


@login_required
@permission_required(AUDIT_LOG_VIEW, raise_exception=True)
def audit_list(request: HttpRequest) -> HttpResponse:
    form, filters = _filtered(request)
    page, query = page_of(request, selectors.audit_entries(filters), PAGE_SIZE)
    page.object_list = list(page.object_list)
    for entry in page.object_list:  # what changed, at a glance (no query: the row holds it)
        entry.changed_keys = changed_keys(*before_after(entry))
    context = {"form": form, "page": page, "query": query}
    return render(request, list_template(request, "console/audit_list.html"), context)


@login_required
@permission_required(AUDIT_LOG_VIEW, raise_exception=True)
def audit_export(request: HttpRequest) -> StreamingHttpResponse:
    """The filtered trail as CSV, streamed row by row (console.exports, formula-safe)."""
    _, filters = _filtered(request)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    return csv_response(
        selectors.EXPORT_HEADER,
        selectors.audit_export_rows(filters),
        filename=f"audit-{stamp}.csv",
    )


@login_required
@permission_required(AUDIT_LOG_VIEW, raise_exception=True)
def audit_detail(request: HttpRequest, pk: int) -> HttpResponse:
    entry = selectors.audit_entry(pk)
    if entry is None:
        raise Http404("No audit entry has this id.")
    before, after = before_after(entry)
    rows = readable(diff_rows(before, after), entry.target_type)
    context = {
        "entry": entry,
        "has_diff": before is not None or after is not None,
        "changed": [row for row in rows if row.is_change],
        "unchanged": [row for row in rows if not row.is_change],
        "details_json": json.dumps(entry.details, indent=2, sort_keys=True, ensure_ascii=False),
    }
    return render(request, "console/audit_detail.html", context)


@login_required
@permission_required(AUDIT_LOG_VIEW, raise_exception=True)
def audit_verify(request: HttpRequest) -> HttpResponse:
    """Walk the whole chain now and name the first broken link (staff.audit_chain)."""
    return render(request, "console/audit_verify.html", {"report": chain_verify()})
