"""The phases of a run, one step each: a page of the upstream's payouts, our payouts its list did
not show, one account's balance, done. Each step's findings are committed with the cursor's
advance in one transaction (docs/books.md "Reconciliation")."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import VirtualAccount
from accounts.virtual_accounts import balance_snapshot_record
from books.ledger import roll_forward
from books.reconciliation import matching
from books.reconciliation.models import (
    PAYOUT_KINDS,
    ExceptionKind,
    ReconciliationRun,
    RunPhase,
    RunState,
)
from books.reconciliation.recording import record_finding, settle
from books.reconciliation.sides import account_of_recipient, fiat_account_of, our_side, their_side
from gateway.client import call_sync, upstream
from gateway.errors import BudgetExhausted, NotFoundError
from gateway.models import Environment
from gateway.schemas import Payout as UpstreamPayout
from payouts.models import Payout, PayoutMode, PayoutStatus
from staff.actions import act, announce_change

PAGE_LIMIT = 100
UNSEEN_PER_STEP = 10
# What a run's audit entries show before and after.
RUN_FIELDS = ("state", "phase", "next_page", "calls_spent", "findings", "resolved")
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


@dataclass
class Calls:
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


def locked_run(run_id: int) -> ReconciliationRun:
    return (
        ReconciliationRun.objects.select_for_update(of=("self",))
        .select_related("environment", "virtual_account")
        .get(pk=run_id)
    )


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


def _step_payouts(run: ReconciliationRun, counter: Calls) -> None:
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
        run = locked_run(run.pk)
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
            record_finding(run, finding, payout=payout, account=account)
        for upstream_id in seen:
            kinds = {f.kind for f in found if f.key == upstream_id}
            settle(run, upstream_id, checked=PAYOUT_KINDS, found=kinds)
        run.payouts_checked += len(seen)
        run.seen_upstream_ids = sorted({*run.seen_upstream_ids, *seen})
        run.total_pages = page.total_pages
        if page.page >= page.total_pages or not page.payouts:
            run.phase = RunPhase.UNSEEN
            run.unseen_ids = _unseen(run)
        else:
            run.next_page = page.page + 1
        run.save()
        announce_change(run)


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


def _step_unseen(run: ReconciliationRun, counter: Calls) -> None:
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
            run = locked_run(run.pk)
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
                        record_finding(run, finding, payout=payout, account=payout.virtual_account)
                    settle(
                        run, ours.upstream_id, checked=PAYOUT_KINDS, found={f.kind for f in found}
                    )
                    run.payouts_checked += 1
                run.unseen_ids = [pk for pk in run.unseen_ids if pk not in answers]
                if not run.unseen_ids:
                    run.phase = RunPhase.BALANCES
                run.save()
                announce_change(run)


def _accounts(run: ReconciliationRun) -> list[VirtualAccount]:
    accounts = VirtualAccount.objects.filter(environment=run.environment, mode="fiat").exclude(
        upstream_id=None
    )
    if run.virtual_account_id is not None:
        accounts = accounts.filter(pk=run.virtual_account_id)
    else:
        accounts = accounts.filter(status="active")
    return list(accounts.order_by("pk"))


def _step_balance(run: ReconciliationRun, counter: Calls) -> None:
    done = set(run.accounts_done)
    account = next((va for va in _accounts(run) if va.pk not in done), None)
    if account is None:
        with transaction.atomic():
            run = locked_run(run.pk)
            run.phase = RunPhase.DONE
            run.save(update_fields=["phase"])
        return
    client = upstream(run.environment, background=True)
    balance = counter.call(client.virtual_accounts.balance, str(account.upstream_id))
    as_of = balance.updated_at or timezone.now()
    with transaction.atomic():
        run = locked_run(run.pk)
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
            record_finding(run, finding, payout=None, account=account)
        settle(run, key, checked=(ExceptionKind.BALANCE_DIFFERS,), found={f.kind for f in found})
        run.accounts_done = [*run.accounts_done, account.pk]
        run.accounts_checked += 1
        run.save()
        announce_change(run)


def _step_done(run: ReconciliationRun, counter: Calls) -> None:
    with act(
        actor=None, action="books.reconciliation_completed", target=run, fields=RUN_FIELDS
    ) as completed:
        run = completed.target
        if run.state != RunState.RUNNING:
            completed.nothing_changed()
            return
        run.state = RunState.COMPLETED
        run.finished_at = timezone.now()
        run.save()
        completed.details.update(
            calls_spent=run.calls_spent,
            payouts_checked=run.payouts_checked,
            accounts_checked=run.accounts_checked,
        )


STEPS: dict[RunPhase, Callable[[ReconciliationRun, Calls], None]] = {
    RunPhase.PAYOUTS: _step_payouts,
    RunPhase.UNSEEN: _step_unseen,
    RunPhase.BALANCES: _step_balance,
    RunPhase.DONE: _step_done,
}
