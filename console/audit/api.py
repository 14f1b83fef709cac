"""The audit trail over HTTP: `GET /audit` (filters, paging), `GET /audit/{id}` (with its diff),
`GET /audit/verify` (the chain). Read-only; view_audit_log (config/api.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.http import Http404, HttpRequest
from ninja import Field, Query, Router, Schema

from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES, PageNumber, PageOut, PageSize, paginate
from console.audit import selectors
from console.audit.diff import before_after, changed_keys
from console.inputs import Text
from staff import roles
from staff.audit_chain import chain_verify
from staff.models import AuditEntry

router = Router(tags=["audit"])


class AuditFiltersIn(Schema):
    person: Text | None = Field(
        None, pattern=r"^(\d{1,18}|system)$", description="A staff user's id, or `system`."
    )
    target_type: Text | None = Field(None, max_length=100, description="e.g. payouts.payout")
    target_id: Text | None = Field(None, max_length=100)
    action: Text | None = Field(None, max_length=100, description="A prefix, e.g. `payout.`")
    since: datetime | None = Field(None, description="From this moment (included).")
    until: datetime | None = Field(None, description="Before this moment (excluded).")
    q: Text | None = Field(
        None, max_length=200, description="Words in the action, object or details."
    )
    sort: Literal["newest", "oldest"] = "newest"

    def filters(self) -> selectors.AuditFilters:
        return selectors.AuditFilters(
            person=self.person or "",
            target_type=self.target_type or "",
            target_id=self.target_id or "",
            action=self.action or "",
            since=self.since,
            until=self.until,
            text=self.q or "",
            sort=self.sort,
        )


class AuditEntryOut(Schema):
    id: int
    seq: int = Field(description="Its place in the hash chain (1, 2, 3...).")
    at: datetime
    person: str | None = Field(description="The staff member's email; null: the system.")
    action: str
    target_type: str
    target_id: str
    details: dict[str, Any]
    before: dict[str, Any] | None = Field(description="The object before (null: not recorded).")
    after: dict[str, Any] | None
    changed: list[str] = Field(description="Keys whose value differs between before and after.")
    entry_hash: str
    prev_hash: str


class AuditPage(PageOut[AuditEntryOut]):
    pass


class ChainBreakOut(Schema):
    entry_id: int | None
    seq: int
    problem: str


class ChainOut(Schema):
    ok: bool
    checked: int = Field(description="Entries verified (up to the break, if any).")
    head_seq: int = Field(description="The last good entry's seq.")
    head_hash: str = Field(description="Its hash: keep a copy elsewhere to detect truncation.")
    broken: ChainBreakOut | None = Field(description="The first broken link.")


def _out(entry: AuditEntry) -> dict[str, Any]:
    before, after = before_after(entry)
    return {
        "id": entry.pk,
        "seq": entry.seq,
        "at": entry.at,
        "person": entry.actor.email if entry.actor else None,
        "action": entry.action,
        "target_type": entry.target_type,
        "target_id": entry.target_id,
        "details": entry.details,
        "before": before,
        "after": after,
        "changed": changed_keys(before, after),
        "entry_hash": entry.entry_hash,
        "prev_hash": entry.prev_hash,
    }


@router.get("", response={200: AuditPage, **ERROR_RESPONSES})
@needs(roles.AUDIT_LOG_VIEW)
def audit_list(
    request: HttpRequest,
    filters: Query[AuditFiltersIn],
    page: int = PageNumber,
    page_size: int = PageSize,
) -> dict[str, Any]:
    """The audit trail, filtered and sorted by time; the same query as the page and its CSV."""
    result = paginate(selectors.audit_entries(filters.filters()), page=page, page_size=page_size)
    result["items"] = [_out(entry) for entry in result["items"]]
    return result


@router.get("/verify", response={200: ChainOut, **ERROR_RESPONSES})
@needs(roles.AUDIT_LOG_VIEW)
def audit_verify(request: HttpRequest) -> dict[str, Any]:
    """Walk the hash chain now; name the first broken link (entry, what differs)."""
    report = chain_verify()
    broken = report.broken
    return {
        "ok": report.ok,
        "checked": report.checked,
        "head_seq": report.head_seq,
        "head_hash": report.head_hash,
        "broken": None
        if broken is None
        else {"entry_id": broken.entry_id, "seq": broken.seq, "problem": broken.problem},
    }


@router.get("/{entry_id}", response={200: AuditEntryOut, **ERROR_RESPONSES})
@needs(roles.AUDIT_LOG_VIEW)
def audit_detail(request: HttpRequest, entry_id: int) -> dict[str, Any]:
    """One entry, with its before, after and the keys that changed."""
    entry = selectors.audit_entry(entry_id)
    if entry is None:
        raise Http404("No audit entry has this id.")
    return _out(entry)
