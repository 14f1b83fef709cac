"""
Reconciliation runs and the exceptions queue: every write (docs/books.md "Reconciliation").

A run compares one environment (or one virtual account) with the upstream, one step at a time:
a page of `GET /v1/payouts` for the window, a look-up of our payouts the list did not show, one
account's balance. Every step's upstream calls go through the gateway in background priority and
are counted on the run; what a step found is committed with the cursor's advance in one
transaction, so a budget refusal or a fault between steps pauses the run where it stopped and a
later step resumes it without counting anything twice. Findings are kept as exceptions, one
unresolved item per (environment, kind, what it concerns): a later run that finds the same
mismatch updates it, one that finds the two sides agree resolves it itself.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext
from django_q.tasks import async_task

from accounts.models import Recipient, VirtualAccount
from accounts.virtual_accounts import balance_snapshot_record
from books.ledger import roll_forward
from books.models import AdjustmentKind, BalanceAdjustment
from books.reconciliation import matching
from books.reconciliation.live import run_progress
from books.reconciliation.models import (
    PAYOUT_KINDS,
    ExceptionComment,
    ExceptionKind,
    ExceptionState,
    ReconciliationException,
    ReconciliationRun,
    RunPhase,
    RunState,
)
from gateway.client import call_sync, upstream
from gateway.errors import BudgetExhausted, NotFoundError, PermanentError, UpstreamError
from gateway.models import Environment
from gateway.schemas import Payout as UpstreamPayout
from gateway.service_errors import service_error_from_upstream
from payouts.models import ChangeSource, Payout, PayoutMode, PayoutStatus
from payouts.tracking.adopt import payout_adopt
from payouts.tracking.events import payout_apply_report
from payouts.tracking.upstream_status import UnreadableStatus, upstream_status
from staff import roles
from staff.audit import audit_record
from staff.errors import ServiceError
from staff.models import StaffUser

logger = logging.getLogger("books")

PAGE_LIMIT = 100
UNSEEN_PER_STEP = 10
RESUME_DELAY = timedelta(minutes=2)
RESOLVED = ExceptionState.RESOLVED
# Our payouts the upstream holds (an upstream id, past our own states).
_UPSTREAM_STATES = (
    PayoutStatus.CREATED,
    PayoutStatus.PENDING,
    PayoutStatus.PROCESSING,
    PayoutStatus.IN_REVIEW,
    PayoutStatus.KYT_PENDING,
    PayoutStatus.COMPLETED,
    PayoutStatus.FAILED,
    PayoutStatus.RETURNED,
    PayoutStatus.CANCELLED,
)


def require(user: StaffUser | None, permission: str) -> None:
    """`None` is the system (the schedule); a person needs the permission."""
    if user is not None and not user.has_perm(permission):
        raise PermissionDenied(
            gettext("You do not have the permission %(permission)s.") % {"permission": permission}
        )


# ---------------------------------------------------------------------------------------------
# Both sides of a payout


def our_side(payout: Payout) -> matching.Side:
    """PayOps's record as the upstream would word it: charged figures first, else previewed."""
    amount = payout.charged_amount if payout.charged_amount is not None else payout.amount
    fee = (
        payout.charged_total_fees
        if payout.charged_total_fees is not None
        else payout.preview_total_fees
    )
    to_amount = (
        payout.charged_recipient_amount
        if payout.charged_recipient_amount is not None
        else payout.preview_recipient_amount
    )
    return matching.Side(
        upstream_id=str(payout.upstream_id),
        status=matching.upstream_word(str(payout.status)),
        amount=amount,
        fee=fee,
        to_amount=to_amount,
        currency=payout.currency,
        to_currency=payout.charged_recipient_currency or payout.preview_recipient_currency,
    )


def their_side(record: UpstreamPayout) -> matching.Side:
    return matching.Side(
        upstream_id=record.payout_id,
        status=str(record.status).upper(),
        amount=record.from_amount,
        fee=record.fee,
        to_amount=record.to_amount,
        currency=record.from_currency or "USD",
        to_currency=record.to_currency or "",
    )


def account_of_recipient(environment: Environment, recipient_id: str | None) -> Recipient | None:
    """The upstream's payout names no virtual account (decisions.md 2): its recipient does."""
    if not recipient_id:
        return None
    return (
        Recipient.objects.filter(environment=environment, upstream_id=recipient_id)
        .select_related("end_user")
        .first()
    )


def fiat_account_of(recipient: Recipient | None, currency: str) -> VirtualAccount | None:
    if recipient is None:
        return None
    accounts = list(
        VirtualAccount.objects.filter(end_user=recipient.end_user, mode="fiat")
        .exclude(upstream_id=None)
        .order_by("pk")
    )
    # The account in the payout's currency first, then the oldest.
    accounts.sort(key=lambda va: va.currency != currency)
    return accounts[0] if accounts else None


# ---------------------------------------------------------------------------------------------
# Runs


def run_start(
    *,
    environment: Environment,
    by: StaffUser | None,
    virtual_account: VirtualAccount | None = None,
    window_start: datetime | None = None,
    window_end: datetime | None = None,
    trigger: str = "manual",
) -> ReconciliationRun:
    """Open a run and queue its steps after commit. One open run per scope at a time."""
    require(by, roles.RECONCILE)
    now = timezone.now()
    end = window_end or now
    start = window_start or (end - timedelta(days=1)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    if start >= end:
        raise ServiceError(
            gettext("The window must start before it ends."),
            code="invalid_window",
            errors=[("window_start", gettext("must be before window_end"))],
        )
    if virtual_account is not None and virtual_account.environment_id != environment.pk:
        raise ServiceError(
            gettext("The virtual account is in another environment."),
            code="invalid_account",
            errors=[("virtual_account_id", gettext("is not in this environment"))],
        )
    with transaction.atomic():
        busy = ReconciliationRun.objects.select_for_update().filter(
            environment=environment,
            virtual_account=virtual_account,
            state__in=(RunState.RUNNING, RunState.PAUSED),
        )
        if busy.exists():
            raise ServiceError(
                gettext("A run of this scope is still open: it resumes on its own."),
                code="run_open",
                status=409,
            )
        run = ReconciliationRun.objects.create(
            environment=environment,
            virtual_account=virtual_account,
            window_start=start,
            window_end=end,
            started_by=by,
            trigger=trigger,
        )
        audit_record(
            actor=by,
            action="books.reconciliation_started",
            target=run,
            before={},
            after=_run_snapshot(run),
        )
        run_progress(run)
        transaction.on_commit(lambda: queue_run(run.pk))
    return run


def queue_run(run_id: int) -> None:
    from books.reconciliation.tasks import reconciliation_run_task

    async_task(reconciliation_run_task, run_id)


def run_continue(run_id: int, *, max_steps: int = 10_000) -> ReconciliationRun:
    """Take steps until the run completes, pauses or fails."""
    for _ in range(max_steps):
        if not run_step(run_id=run_id):
            break
    return ReconciliationRun.objects.get(pk=run_id)


def run_step(*, run_id: int) -> bool:
    """One step of a running (or due paused) run; True while there is more to do."""
    run = ReconciliationRun.objects.select_related("environment", "virtual_account").get(pk=run_id)
    if run.state == RunState.PAUSED:
        with transaction.atomic():
            run = _locked(run_id)
            if run.state != RunState.PAUSED:
                return run.state == RunState.RUNNING
            run.state = RunState.RUNNING
            run.paused_reason = ""
            run.resume_after = None
            run.save(update_fields=["state", "paused_reason", "resume_after"])
    elif run.state != RunState.RUNNING:
        return False
    step = {
        RunPhase.PAYOUTS: _step_payouts,
        RunPhase.UNSEEN: _step_unseen,
        RunPhase.BALANCES: _step_balance,
        RunPhase.DONE: _step_done,
    }[RunPhase(run.phase)]
    counter = _Calls()
    try:
        step(run, counter)
    except UpstreamError as exc:
        if isinstance(exc, PermanentError):
            _fail(run.pk, counter, str(exc))
            return False
        _pause(run.pk, counter, exc)
        return False
    return ReconciliationRun.objects.filter(pk=run_id, state=RunState.RUNNING).exists()


@dataclass
class _Calls:
    """The upstream calls one step made: each counted when it is made, a failed one too (it
    was sent and spent), except one our own limiter refused before sending (no status)."""

    made: int = 0

    def call(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        self.made += 1
        try:
            return call_sync(func, *args, **kwargs)
        except BudgetExhausted as exc:
            if exc.status is None:
                self.made -= 1
            raise


def _locked(run_id: int) -> ReconciliationRun:
    return (
        ReconciliationRun.objects.select_for_update(of=("self",))
        .select_related("environment", "virtual_account")
        .get(pk=run_id)
    )


def _pause(run_id: int, counter: _Calls, exc: Exception) -> None:
    retry_after = getattr(exc, "retry_after", None)
    delay = max(RESUME_DELAY, timedelta(seconds=float(retry_after or 0)))
    with transaction.atomic():
        run = _locked(run_id)
        before = _run_snapshot(run)
        run.calls_spent += counter.made
        run.state = RunState.PAUSED
        run.interruptions += 1
        run.paused_reason = f"{type(exc).__name__}: {exc}"[:300]
        run.resume_after = timezone.now() + delay
        run.save()
        audit_record(
            actor=None,
            action="books.reconciliation_paused",
            target=run,
            before=before,
            after=_run_snapshot(run),
        )
        run_progress(run)


def _fail(run_id: int, counter: _Calls, reason: str) -> None:
    with transaction.atomic():
        run = _locked(run_id)
        before = _run_snapshot(run)
        run.calls_spent += counter.made
        run.state = RunState.FAILED
        run.paused_reason = reason[:300]
        run.finished_at = timezone.now()
        run.save()
        audit_record(
            actor=None,
            action="books.reconciliation_failed",
            target=run,
            before=before,
            after=_run_snapshot(run),
        )
        run_progress(run)


def _run_snapshot(run: ReconciliationRun) -> dict[str, Any]:
    return {
        "state": run.state,
        "phase": run.phase,
        "next_page": run.next_page,
        "calls_spent": run.calls_spent,
        "findings": run.findings,
        "resolved": run.resolved,
    }


def _ours_by_upstream_id(environment: Environment, ids: Iterable[str]) -> dict[str, Payout]:
    return {
        str(p.upstream_id): p
        for p in Payout.objects.filter(environment=environment, upstream_id__in=list(ids))
    }


def _in_scope(run: ReconciliationRun, record: UpstreamPayout, ours: Payout | None) -> bool:
    if run.virtual_account_id is None:
        return True
    if ours is not None:
        return ours.virtual_account_id == run.virtual_account_id
    recipient = account_of_recipient(run.environment, record.recipient_id)
    account = fiat_account_of(recipient, record.from_currency or "USD")
    return account is not None and account.pk == run.virtual_account_id


def _step_payouts(run: ReconciliationRun, counter: _Calls) -> None:
    client = upstream(run.environment, background=True)
    page = counter.call(
        client.payouts.list,
        from_date=run.window_start.date(),
        to_date=run.window_end.date(),
        page=run.next_page,
        limit=PAGE_LIMIT,
    )
    ours = _ours_by_upstream_id(run.environment, (p.payout_id for p in page.payouts))
    records = [p for p in page.payouts if _in_scope(run, p, ours.get(p.payout_id))]
    sides = {uid: our_side(p) for uid, p in ours.items()}
    found, seen = matching.match_payouts(sides, (their_side(r) for r in records))
    by_id = {r.payout_id: r for r in records}
    with transaction.atomic():
        run = _locked(run.pk)
        if run.phase != RunPhase.PAYOUTS:
            return
        run.calls_spent += counter.made
        for finding in found:
            record = by_id[finding.key]
            payout = ours.get(finding.key)
            account = (
                payout.virtual_account
                if payout is not None
                else fiat_account_of(
                    account_of_recipient(run.environment, record.recipient_id),
                    record.from_currency or "USD",
                )
            )
            _record(run, finding, payout=payout, account=account)
        for upstream_id in seen:
            kinds = {f.kind for f in found if f.key == upstream_id}
            _settle(run, upstream_id, checked=PAYOUT_KINDS, found=kinds)
        run.payouts_checked += len(seen)
        run.seen_upstream_ids = sorted({*run.seen_upstream_ids, *seen})
        run.total_pages = page.total_pages
        if page.page >= page.total_pages or not page.payouts:
            run.phase = RunPhase.UNSEEN
            run.unseen_ids = _unseen(run)
        else:
            run.next_page = page.page + 1
        run.save()
        run_progress(run)


def _unseen(run: ReconciliationRun) -> list[int]:
    """Our payouts of the window (by when we sent them) that the upstream's list did not show."""
    ours = (
        Payout.objects.filter(
            environment=run.environment,
            mode=PayoutMode.FIAT,
            status__in=_UPSTREAM_STATES,
        )
        .exclude(upstream_id=None)
        .annotate(sent_at=Coalesce("submitted_at", "created_at"))
        .filter(sent_at__gte=run.window_start, sent_at__lte=run.window_end)
    )
    if run.virtual_account_id is not None:
        ours = ours.filter(virtual_account_id=run.virtual_account_id)
    seen = set(run.seen_upstream_ids)
    return [pk for pk, uid in ours.values_list("pk", "upstream_id") if uid not in seen]


def _step_unseen(run: ReconciliationRun, counter: _Calls) -> None:
    """GET each of ours the list did not show (it may lie just outside the window): a 404 is a
    payout missing upstream; an answer is compared like a listed one."""
    batch = list(run.unseen_ids[:UNSEEN_PER_STEP])
    client = upstream(run.environment, background=True)
    answers: dict[int, UpstreamPayout | None] = {}
    payouts = {p.pk: p for p in Payout.objects.filter(pk__in=batch)}
    try:
        for pk in batch:
            payout = payouts.get(pk)
            if payout is None:
                continue
            try:
                answers[pk] = counter.call(client.payouts.get, str(payout.upstream_id))
            except NotFoundError:
                answers[pk] = None
    finally:
        # What was read before an interruption is kept: those are not read again.
        with transaction.atomic():
            run = _locked(run.pk)
            if run.phase == RunPhase.UNSEEN:
                run.calls_spent += counter.made
                counter.made = 0
                for pk, record in answers.items():
                    payout = payouts[pk]
                    ours = our_side(payout)
                    if record is None:
                        found = [matching.missing_upstream(ours)]
                    else:
                        found = matching.compare_payout(ours, their_side(record))
                    for finding in found:
                        _record(run, finding, payout=payout, account=payout.virtual_account)
                    _settle(
                        run, ours.upstream_id, checked=PAYOUT_KINDS, found={f.kind for f in found}
                    )
                    run.payouts_checked += 1
                run.unseen_ids = [pk for pk in run.unseen_ids if pk not in answers]
                if not run.unseen_ids:
                    run.phase = RunPhase.BALANCES
                run.save()
                run_progress(run)


def _accounts(run: ReconciliationRun) -> list[VirtualAccount]:
    accounts = VirtualAccount.objects.filter(environment=run.environment, mode="fiat").exclude(
        upstream_id=None
    )
    if run.virtual_account_id is not None:
        accounts = accounts.filter(pk=run.virtual_account_id)
    else:
        accounts = accounts.filter(status="active")
    return list(accounts.order_by("pk"))


def _step_balance(run: ReconciliationRun, counter: _Calls) -> None:
    done = set(run.accounts_done)
    account = next((va for va in _accounts(run) if va.pk not in done), None)
    if account is None:
        with transaction.atomic():
            run = _locked(run.pk)
            run.phase = RunPhase.DONE
            run.save(update_fields=["phase"])
        return
    client = upstream(run.environment, background=True)
    balance = counter.call(client.virtual_accounts.balance, str(account.upstream_id))
    as_of = balance.updated_at or timezone.now()
    with transaction.atomic():
        run = _locked(run.pk)
        if run.phase != RunPhase.BALANCES or account.pk in run.accounts_done:
            return
        run.calls_spent += counter.made
        balance_snapshot_record(
            account,
            balance=balance.available_balance,
            currency=balance.currency,
            as_of=as_of,
            source="reconciliation",
        )
        # As of the reading: the upstream's own time when it gives one later than ours (a
        # movement it stamped a moment ahead of our clock still belongs before its balance).
        rolled = roll_forward(account, start=run.window_start, end=max(timezone.now(), as_of))
        ledger = {
            "opening": rolled.opening,
            "deposits": rolled.deposits,
            "payouts": rolled.payouts,
            "fees": rolled.fees,
            "reversals": rolled.reversals,
            "adjustments": rolled.adjustments,
            "closing": rolled.closing,
        }
        key = f"va:{account.pk}"
        found = matching.compare_balance(
            key=key,
            currency=balance.currency,
            ledger=ledger,
            upstream_balance=balance.available_balance,
        )
        for finding in found:
            _record(run, finding, payout=None, account=account)
        _settle(run, key, checked=(ExceptionKind.BALANCE_DIFFERS,), found={f.kind for f in found})
        run.accounts_done = [*run.accounts_done, account.pk]
        run.accounts_checked += 1
        run.save()
        run_progress(run)


def _step_done(run: ReconciliationRun, counter: _Calls) -> None:
    with transaction.atomic():
        run = _locked(run.pk)
        if run.state != RunState.RUNNING:
            return
        before = _run_snapshot(run)
        run.state = RunState.COMPLETED
        run.finished_at = timezone.now()
        run.save()
        audit_record(
            actor=None,
            action="books.reconciliation_completed",
            target=run,
            before=before,
            after=_run_snapshot(run),
            details={
                "calls_spent": run.calls_spent,
                "payouts_checked": run.payouts_checked,
                "accounts_checked": run.accounts_checked,
            },
        )
        run_progress(run)


def _item_snapshot(item: ReconciliationException) -> dict[str, Any]:
    return {
        "state": item.state,
        "owner": item.owner.email if item.owner_id and item.owner else None,
        "resolution_reason": item.resolution_reason,
        "auto_resolved": item.auto_resolved,
        "ours": item.ours,
        "theirs": item.theirs,
        "difference": item.difference,
    }


def _record(
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
        if open_item.last_seen_run_id == run.pk and open_item.ours == finding.ours:
            return
        before = _item_snapshot(open_item)
        open_item.ours, open_item.theirs = finding.ours, finding.theirs
        open_item.difference, open_item.summary = finding.difference, finding.summary[:300]
        open_item.last_seen_run = run
        open_item.updated_at = now
        open_item.save()
        if before["ours"] != finding.ours or before["theirs"] != finding.theirs:
            audit_record(
                actor=None,
                action="books.exception_updated",
                target=open_item,
                before=before,
                after=_item_snapshot(open_item),
            )
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
    audit_record(
        actor=None,
        action="books.exception_opened",
        target=item,
        before={},
        after=_item_snapshot(item),
        details={"run": run.pk, "kind": finding.kind},
    )


def _settle(run: ReconciliationRun, key: str, *, checked: Iterable[str], found: set[str]) -> None:
    """Resolve (itself) every unresolved item about `key` of a kind checked and not found."""
    agreed = (
        ReconciliationException.objects.select_for_update()
        .filter(environment=run.environment, key=key, kind__in=list(checked))
        .exclude(state=RESOLVED)
        .exclude(kind__in=list(found))
    )
    now = timezone.now()
    for item in agreed:
        before = _item_snapshot(item)
        item.state = RESOLVED
        item.auto_resolved = True
        item.resolution_reason = f"agreed in run {run.pk}"
        item.resolved_at = now
        item.resolved_by = None
        item.last_seen_run = run
        item.updated_at = now
        item.save()
        run.resolved += 1
        audit_record(
            actor=None,
            action="books.exception_resolved",
            target=item,
            before=before,
            after=_item_snapshot(item),
            details={"run": run.pk, "auto": True},
        )


# ---------------------------------------------------------------------------------------------
# The exceptions queue


def _locked_item(item_id: int) -> ReconciliationException:
    try:
        return (
            ReconciliationException.objects.select_for_update(of=("self",))
            .select_related("environment", "owner", "payout", "virtual_account")
            .get(pk=item_id)
        )
    except ReconciliationException.DoesNotExist:
        raise ServiceError(gettext("No such exception."), code="not_found", status=404) from None


def _refuse_resolved(item: ReconciliationException) -> None:
    if item.state == RESOLVED:
        raise ServiceError(
            gettext("This exception is resolved."), code="exception_resolved", status=409
        )


@contextmanager
def _item_changed(
    item_id: int,
    *,
    by: StaffUser,
    action: str,
    details: dict[str, Any] | None = None,
    unresolved: bool = True,
) -> Iterator[ReconciliationException]:
    """One change to an item: locked (and refused if already resolved), changed by the caller
    with `updated_at` already set, saved with its audit entry (before and after) in one
    transaction. `details` may be filled in by the caller inside the block."""
    with transaction.atomic():
        item = _locked_item(item_id)
        if unresolved:
            _refuse_resolved(item)
        before = _item_snapshot(item)
        item.updated_at = timezone.now()
        yield item
        item.save()
        audit_record(
            actor=by,
            action=action,
            target=item,
            before=before,
            after=_item_snapshot(item),
            details=details,
        )


def _resolve(item: ReconciliationException, *, by: StaffUser, reason: str) -> None:
    item.state = RESOLVED
    item.resolution_reason = reason
    item.resolved_by = by
    item.resolved_at = item.updated_at


def exception_assign(
    *, item: ReconciliationException, owner: StaffUser | None, by: StaffUser
) -> ReconciliationException:
    """Give the item an owner (one who may reconcile), or none."""
    require(by, roles.RECONCILE)
    if owner is not None and not owner.has_perm(roles.RECONCILE):
        raise ServiceError(
            gettext("The owner must be someone who may reconcile."),
            code="invalid_owner",
            errors=[("owner_id", gettext("cannot work reconciliation exceptions"))],
        )
    with _item_changed(item.pk, by=by, action="books.exception_assigned") as item:
        item.owner = owner
    return item


def exception_comment(
    *, item: ReconciliationException, body: str, by: StaffUser
) -> ExceptionComment:
    require(by, roles.RECONCILE)
    text = (body or "").strip()
    if not text:
        raise ServiceError(
            gettext("A comment needs text."), errors=[("body", gettext("is required"))]
        )
    if len(text) > 2000:
        raise ServiceError(
            gettext("The comment is too long."),
            errors=[("body", gettext("at most 2000 characters"))],
        )
    with transaction.atomic():
        item = _locked_item(item.pk)
        comment = ExceptionComment.objects.create(exception=item, author=by, body=text)
        audit_record(
            actor=by,
            action="books.exception_commented",
            target=item,
            details={"comment": comment.pk},
        )
    return comment


def exception_set_state(
    *, item: ReconciliationException, state: str, by: StaffUser, reason: str = ""
) -> ReconciliationException:
    """open <-> investigating, or resolved with a reason (marked as explained)."""
    require(by, roles.RECONCILE)
    if state not in ExceptionState.values:
        raise ServiceError(
            gettext("Unknown state."),
            errors=[("state", gettext("must be open, investigating or resolved"))],
        )
    reason = (reason or "").strip()
    if state == RESOLVED and not reason:
        raise ServiceError(
            gettext("Say why it is resolved."),
            code="reason_required",
            errors=[("reason", gettext("is required"))],
        )
    if state == RESOLVED and len(reason) > 500:
        raise ServiceError(
            gettext("The reason is too long."),
            errors=[("reason", gettext("at most 500 characters"))],
        )
    with _item_changed(item.pk, by=by, action="books.exception_state_set") as item:
        if state == RESOLVED:
            _resolve(item, by=by, reason=reason)
        else:
            item.state = state
    return item


def exception_explain(
    *, item: ReconciliationException, reason: str, by: StaffUser
) -> ReconciliationException:
    """Mark as explained. A balance difference is recorded as a BalanceAdjustment of the amount
    it was off by, so the ledger agrees with the upstream from then on."""
    require(by, roles.RECONCILE)
    reason = (reason or "").strip()
    if not reason:
        raise ServiceError(
            gettext("Say what explains it."),
            code="reason_required",
            errors=[("reason", gettext("is required"))],
        )
    if item.kind != ExceptionKind.BALANCE_DIFFERS:
        return exception_set_state(item=item, state=RESOLVED, by=by, reason=reason)
    details: dict[str, Any] = {}
    with _item_changed(item.pk, by=by, action="books.exception_explained", details=details) as item:
        if item.virtual_account is None or item.difference is None:
            raise ServiceError(
                gettext("This item names no account or amount."), code="not_explainable"
            )
        amount = matching.cents(Decimal(item.difference))
        adjustment = BalanceAdjustment.objects.create(
            virtual_account=item.virtual_account,
            amount=amount,
            currency=str(item.theirs.get("currency") or item.virtual_account.currency),
            at=timezone.now(),
            kind=AdjustmentKind.UPSTREAM,
            reason=reason[:500],
            recorded_by=by,
        )
        audit_record(
            actor=by,
            action="books.balance_adjusted",
            target=adjustment,
            before={},
            after={"amount": amount, "reason": reason, "virtual_account": item.virtual_account.pk},
        )
        details["adjustment"] = adjustment.pk
        _resolve(item, by=by, reason=reason)
    return item


def exception_refetch(*, item: ReconciliationException, by: StaffUser) -> ReconciliationException:
    """GET the payout again and apply it through payouts' own tracking (the state table moves
    it, recorded as found by reading back). The next run decides whether the item agrees."""
    require(by, roles.RECONCILE)
    if item.kind == ExceptionKind.BALANCE_DIFFERS or not item.upstream_id:
        raise ServiceError(gettext("Only a payout can be fetched again."), code="not_refetchable")
    _refuse_resolved(item)
    try:
        record = call_sync(upstream(item.environment).payouts.get, item.upstream_id)
    except UpstreamError as exc:
        raise service_error_from_upstream(exc, what="the payout") from exc
    raw = record.model_dump(mode="json")
    try:
        report = upstream_status(raw)
    except UnreadableStatus as exc:
        raise ServiceError(
            gettext("The upstream's answer is unreadable: %(exc)s") % {"exc": exc}
        ) from exc
    payout_apply_report(
        environment=item.environment,
        report=report,
        source=ChangeSource.POLL,
        event_type="reconciliation_refetch",
        data=raw,
    )
    # Not refused if resolved meanwhile: what was fetched is recorded either way.
    with _item_changed(
        item.pk, by=by, action="books.exception_refetched", unresolved=False
    ) as item:
        item.theirs = their_side(record).as_json()
        if item.state == ExceptionState.OPEN:
            item.state = ExceptionState.INVESTIGATING
    return item


def exception_adopt(*, item: ReconciliationException, by: StaffUser) -> ReconciliationException:
    """An upstream payout PayOps does not know becomes a read-only PayOps payout (its maker the
    person adopting it, audited), linked to its recipient and account when PayOps knows them."""
    require(by, roles.RECONCILE)
    if item.kind != ExceptionKind.MISSING_IN_PAYOPS:
        raise ServiceError(
            gettext("Only a payout missing in PayOps can be adopted."), code="not_adoptable"
        )
    _refuse_resolved(item)
    try:
        record = call_sync(upstream(item.environment).payouts.get, item.upstream_id)
    except UpstreamError as exc:
        raise service_error_from_upstream(exc, what="the payout") from exc
    recipient = account_of_recipient(item.environment, record.recipient_id)
    account = fiat_account_of(recipient, record.from_currency or "USD")
    if recipient is None or account is None:
        raise ServiceError(
            gettext("PayOps does not know this payout's recipient or its account: add them first."),
            code="recipient_unknown",
            status=409,
        )
    details: dict[str, Any] = {}
    with _item_changed(item.pk, by=by, action="books.exception_adopted", details=details) as item:
        payout = payout_adopt(
            environment=item.environment,
            record=record,
            virtual_account=account,
            recipient=recipient,
            by=by,
        )
        details["payout"] = payout.pk
        item.payout = payout
        item.virtual_account = account
        _resolve(item, by=by, reason=f"adopted as payout {payout.pk}")
    return item


# ---------------------------------------------------------------------------------------------
# Schedules


def runs_daily() -> int:
    """The daily run of every active environment (yesterday and today so far)."""
    started = 0
    for environment in Environment.objects.filter(is_active=True).exclude(base_url=""):
        try:
            run_start(environment=environment, by=None, trigger="schedule")
            started += 1
        except ServiceError as exc:
            logger.info("reconciliation of %s not started: %s", environment, exc.message)
    return started


def runs_resume_due() -> int:
    """Paused runs whose pause is over take their next steps."""
    due = list(
        ReconciliationRun.objects.filter(
            state=RunState.PAUSED, resume_after__lte=timezone.now()
        ).values_list("pk", flat=True)
    )
    for run_id in due:
        run_continue(run_id)
    return len(due)
