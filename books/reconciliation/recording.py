"""What a run found, kept as exceptions: one unresolved item per (environment, kind, what it
concerns); a later run that finds the same mismatch updates it, one that finds the two sides
agree resolves it itself."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.utils import timezone

from accounts.models import VirtualAccount
from books.reconciliation import matching
from books.reconciliation.models import ExceptionState, ReconciliationException, ReconciliationRun
from payouts.models import Payout
from staff.actions import record_action

RESOLVED = ExceptionState.RESOLVED


def item_snapshot(item: ReconciliationException) -> dict[str, Any]:
    return {
        "state": item.state,
        "owner": item.owner.email if item.owner_id and item.owner else None,
        "resolution_reason": item.resolution_reason,
        "auto_resolved": item.auto_resolved,
        "ours": item.ours,
        "theirs": item.theirs,
        "difference": item.difference,
    }


def record_finding(
    run: ReconciliationRun,
    finding: matching.Finding,
    *,
    payout: Payout | None,
    account: VirtualAccount | None,
) -> None:
    """Open an item for a finding, or bring the open one up to date (inside the step's
    transaction). A mismatch a person explained stays explained while it is the same."""
    open_item = (
        ReconciliationException.objects.select_for_update()
        .filter(environment=run.environment, kind=finding.kind, key=finding.key)
        .exclude(state=RESOLVED)
        .first()
    )
    now = timezone.now()
    if open_item is not None:
        _bring_up_to_date(open_item, run, finding, now=now)
        return
    explained = ReconciliationException.objects.filter(
        environment=run.environment,
        kind=finding.kind,
        key=finding.key,
        state=RESOLVED,
        auto_resolved=False,
        ours=finding.ours,
        theirs=finding.theirs,
    ).exists()
    if explained:
        return
    item = ReconciliationException.objects.create(
        environment=run.environment,
        kind=finding.kind,
        key=finding.key,
        payout=payout,
        virtual_account=account,
        upstream_id="" if finding.key.startswith("va:") else finding.key,
        ours=finding.ours,
        theirs=finding.theirs,
        difference=finding.difference,
        summary=finding.summary[:300],
        first_seen_run=run,
        last_seen_run=run,
        created_at=now,
        updated_at=now,
    )
    run.findings += 1
    record_action(
        actor=None,
        action="books.exception_opened",
        target=item,
        before={},
        after=item_snapshot(item),
        details={"run": run.pk, "kind": finding.kind},
    )


def _bring_up_to_date(
    open_item: ReconciliationException,
    run: ReconciliationRun,
    finding: matching.Finding,
    *,
    now: datetime,
) -> None:
    """The open item a run found again: its sides and last run, audited when a side changed."""
    if open_item.last_seen_run_id == run.pk and open_item.ours == finding.ours:
        return
    before = item_snapshot(open_item)
    open_item.ours, open_item.theirs = finding.ours, finding.theirs
    open_item.difference, open_item.summary = finding.difference, finding.summary[:300]
    open_item.last_seen_run = run
    open_item.updated_at = now
    open_item.save()
    if before["ours"] != finding.ours or before["theirs"] != finding.theirs:
        record_action(
            actor=None,
            action="books.exception_updated",
            target=open_item,
            before=before,
            after=item_snapshot(open_item),
        )


def settle(run: ReconciliationRun, key: str, *, checked: Iterable[str], found: set[str]) -> None:
    """Resolve (itself) every unresolved item about `key` of a kind checked and not found."""
    agreed = (
        ReconciliationException.objects.select_for_update()
        .filter(environment=run.environment, key=key, kind__in=list(checked))
        .exclude(state=RESOLVED)
        .exclude(kind__in=list(found))
    )
    now = timezone.now()
    for item in agreed:
        before = item_snapshot(item)
        item.state = RESOLVED
        item.auto_resolved = True
        item.resolution_reason = f"agreed in run {run.pk}"
        item.resolved_at = now
        item.resolved_by = None
        item.last_seen_run = run
        item.updated_at = now
        item.save()
        run.resolved += 1
        record_action(
            actor=None,
            action="books.exception_resolved",
            target=item,
            before=before,
            after=item_snapshot(item),
            details={"run": run.pk, "auto": True},
        )
