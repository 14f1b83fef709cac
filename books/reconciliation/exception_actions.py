"""The exceptions queue: what a person does with an item (assign, comment, set its state,
explain, fetch the payout again, adopt it). Each is one locked, audited change, announced to
the open run and exception pages on commit (books.reconciliation.live)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from books.models import AdjustmentKind, BalanceAdjustment
from books.reconciliation import matching
from books.reconciliation.access import require
from books.reconciliation.models import (
    ExceptionComment,
    ExceptionKind,
    ExceptionState,
    ReconciliationException,
)
from books.reconciliation.recording import RESOLVED, item_snapshot
from books.reconciliation.sides import account_of_recipient, fiat_account_of, their_side
from gateway.client import call_sync, upstream
from gateway.errors import UpstreamError
from gateway.service_errors import service_error_from_upstream
from payouts.models import ChangeSource
from payouts.tracking.adopt import payout_adopt
from payouts.tracking.events import payout_apply_report
from payouts.tracking.upstream_status import UnreadableStatus, upstream_status
from staff import roles
from staff.actions import record_action
from staff.errors import ServiceError
from staff.models import StaffUser


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
    transaction, its live message on commit. `details` may be filled in by the caller inside the
    block."""
    with transaction.atomic():
        item = _locked_item(item_id)
        if unresolved:
            _refuse_resolved(item)
        before = item_snapshot(item)
        item.updated_at = timezone.now()
        yield item
        item.save()
        record_action(
            actor=by,
            action=action,
            target=item,
            before=before,
            after=item_snapshot(item),
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
        record_action(
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
        record_action(
            actor=by,
            action="books.balance_adjusted",
            target=adjustment,
            before={},
            after={"amount": amount, "reason": reason, "virtual_account": item.virtual_account.pk},
            announce=False,  # no page shows an adjustment live; the item's message covers it
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
