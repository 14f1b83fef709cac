"""Draft writes: create, edit, delete, send for approval (preview and documents: own modules)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import Recipient, VirtualAccount
from accounts.recipients import recipient_not_payable_reason
from gateway.models import Environment
from payouts.drafts.checks import (
    add_problem,
    draft_problems,
    identical_in_flight,
    submission_problems,
)
from payouts.errors import DuplicateNeedsConfirmation, PayoutInvalid
from payouts.models import (
    ChangeSource,
    Payout,
    PayoutChannel,
    PayoutMode,
    PayoutStatus,
    PayoutStatusChange,
    ReservationStatus,
)
from payouts.states import EDITABLE, payout_transition
from quotes.models import Quote
from staff.actions import record_action
from staff.models import StaffUser
from staff.roles import PAYOUT_INITIATE

# Fields whose change makes the last preview (and its reserved quote) stale.
PRICED_FIELDS = (
    "virtual_account",
    "recipient",
    "amount",
    "quote",
    "payment_currency",
    "payment_network",
    "client_markup_fixed_fee",
    "client_markup_percentage_fee",
    "client_markup_fx_markup",
)


@dataclass
class DraftValues:
    """What a maker sets on a draft; None leaves a field unchanged on update."""

    virtual_account: VirtualAccount | None = None
    recipient: Recipient | None = None
    amount: Decimal | None = None
    quote: Quote | None = None
    reference: str | None = None
    memo: str | None = None
    internal_notes: str | None = None
    client_markup: dict[str, Decimal | None] | None = None
    payment_currency: str | None = None
    payment_network: str | None = None
    clear_quote: bool = False


def require_initiator(user: StaffUser) -> None:
    if not user.has_perm(PAYOUT_INITIATE):
        raise PermissionDenied(gettext("Only finance makers prepare payouts."))


def require_own_draft(user: StaffUser, payout: Payout) -> None:
    require_initiator(user)
    if payout.maker_id != user.pk:
        raise PermissionDenied(gettext("Only the payout's maker may change it."))
    if payout.status not in EDITABLE:
        raise PayoutInvalid(
            {
                "": [
                    gettext("The payout is %(value)s: only a draft changes.")
                    % {"value": payout.get_status_display().lower()}
                ]
            },
            code="not_a_draft",
        )


def _apply(payout: Payout, values: DraftValues) -> dict[str, Any]:
    """Copy the given values onto the payout; returns {field: (before, after)} of what changed."""
    changes: dict[str, Any] = {}

    def put(name: str, value: Any) -> None:
        before = getattr(payout, name)
        if before != value:
            changes[name] = (before, value)
            setattr(payout, name, value)

    if values.virtual_account is not None:
        if payout.virtual_account_id != values.virtual_account.pk:
            changes["virtual_account"] = (payout.virtual_account_id, values.virtual_account.pk)
        payout.virtual_account = values.virtual_account
        put("mode", values.virtual_account.mode)  # the mode follows the account
    if values.recipient is not None:
        if payout.recipient_id != values.recipient.pk:
            changes["recipient"] = (payout.recipient_id, values.recipient.pk)
        payout.recipient = values.recipient
    if values.clear_quote and payout.quote_id is not None:
        changes["quote"] = (payout.quote_id, None)
        payout.quote = None
    if values.quote is not None:
        if payout.quote_id != values.quote.pk:
            changes["quote"] = (payout.quote_id, values.quote.pk)
        payout.quote = values.quote
    if values.amount is not None:
        put("amount", values.amount)
    elif payout.quote is not None and ("quote" in changes or payout.amount is None):
        put("amount", payout.quote.base_amount)  # "an amount or an active quote"
    for name in ("reference", "memo", "internal_notes", "payment_currency", "payment_network"):
        value = getattr(values, name)
        if value is not None:
            put(name, value.strip())
    if values.client_markup is not None:
        for key in ("fixed_fee", "percentage_fee", "fx_markup"):
            put(f"client_markup_{key}", values.client_markup.get(key))
    if payout.mode == PayoutMode.FIAT and values.payment_currency is None:
        # Switched to a fiat account without restating instructions: they no longer apply.
        put("payment_currency", "")
        put("payment_network", "")
    return changes


def _clear_preview(payout: Payout) -> None:
    payout.preview_fees = {}
    payout.preview_total_fees = None
    payout.preview_recipient_amount = None
    payout.preview_recipient_currency = ""
    payout.previewed_at = None
    payout.preview_quote_id = ""
    payout.preview_quote_expires_at = None
    payout.preview_quote_status = ReservationStatus.NONE


def _jsonable(changes: dict[str, Any]) -> dict[str, Any]:
    return {name: {"from": before, "to": after} for name, (before, after) in changes.items()}


def payout_draft_create(
    *,
    by: StaffUser,
    environment: Environment,
    values: DraftValues,
    channel: str = PayoutChannel.PAGE,
) -> Payout:
    """A new draft of `by`; its idempotency key is created with the row. `channel` says where it
    was made (the page or the API): approval rules can ask more of one than the other."""
    require_initiator(by)
    if channel not in PayoutChannel.values:
        raise ValueError(f"unknown channel {channel!r}")
    missing: dict[str, list[str]] = {}
    if values.virtual_account is None:
        add_problem(missing, "virtual_account", gettext("Choose the virtual account to pay from."))
    if values.recipient is None:
        add_problem(missing, "recipient", gettext("Choose the recipient."))
    if values.amount is None and values.quote is None:
        add_problem(missing, "amount", gettext("Give an amount or choose an active quote."))
    if missing:
        raise PayoutInvalid(missing)
    now = timezone.now()
    payout = Payout(
        environment=environment, maker=by, created_at=now, updated_at=now, channel=channel
    )
    _apply(payout, values)
    _recipient_payable(payout)
    errors = draft_problems(payout, now=now)
    if errors:
        raise PayoutInvalid(errors)
    with transaction.atomic():
        payout.save()
        _timeline_start(payout, by=by)
        record_action(
            actor=by,
            action="payout.draft_created",
            target=payout,
            details={
                "virtual_account": payout.virtual_account.upstream_id,
                "recipient": payout.recipient.upstream_id,
                "amount": payout.amount,
                "currency": payout.currency,
                "mode": payout.mode,
                "quote": payout.quote.upstream_id if payout.quote else None,
                "client_markup": payout.client_markup,
            },
        )
    return payout


def _recipient_payable(payout: Payout) -> None:
    """Dual control: a draft names only a recipient a second person approved (409
    `recipient_not_approved` on `recipient`, before anything is written)."""
    reason = recipient_not_payable_reason(payout.recipient)
    if reason:
        raise PayoutInvalid({"recipient": [reason]}, code="recipient_not_approved")


def _timeline_start(payout: Payout, *, by: StaffUser) -> None:
    """The timeline starts with the draft's creation (not a move: from nothing to draft)."""
    PayoutStatusChange.objects.create(
        payout=payout,
        from_status="",
        to_status=PayoutStatus.DRAFT,
        source=ChangeSource.STAFF,
        by=by,
        at=payout.created_at,
    )


def own_draft_locked(by: StaffUser, payout: Payout) -> Payout:
    """The draft re-read under its row lock with what an edit or a submission reads, and only
    for its maker (call inside the transaction)."""
    locked = (
        # Lock the payout row only: its optional quote is an outer join PostgreSQL refuses.
        Payout.objects.select_for_update(of=("self",))
        .select_related("virtual_account", "recipient", "quote", "environment")
        .get(pk=payout.pk)
    )
    require_own_draft(by, locked)
    return locked


def payout_draft_update(*, by: StaffUser, payout: Payout, values: DraftValues) -> Payout:
    """Edit a draft (its maker only). A change of what is priced drops the stale preview."""
    with transaction.atomic():
        locked = own_draft_locked(by, payout)
        changes = _apply(locked, values)
        if not changes:
            return locked
        now = timezone.now()
        _recipient_payable(locked)
        errors = draft_problems(locked, now=now)
        if errors:
            raise PayoutInvalid(errors)
        if any(name in changes for name in PRICED_FIELDS) or any(
            name.startswith("client_markup") for name in changes
        ):
            _clear_preview(locked)
        locked.updated_at = now
        locked.save()
        record_action(
            actor=by,
            action="payout.draft_edited",
            target=locked,
            details={"changes": _jsonable(changes)},
        )
    return locked


def payout_draft_delete(*, by: StaffUser, payout: Payout) -> None:
    """Delete a draft (its maker only) and, after commit, its stored documents."""
    with transaction.atomic():
        locked = Payout.objects.select_for_update().get(pk=payout.pk)
        require_own_draft(by, locked)
        files = [(doc.file.storage, str(doc.file.name)) for doc in locked.documents.all()]
        record_action(
            actor=by,
            action="payout.draft_deleted",
            target=locked,
            details={"amount": locked.amount, "currency": locked.currency, "documents": len(files)},
        )
        locked.delete()

        def remove_files() -> None:
            for storage, name in files:
                storage.delete(name)

        transaction.on_commit(remove_files)


def payout_send_for_approval(
    *,
    by: StaffUser,
    payout: Payout,
    confirm_duplicate: bool = False,
    channel: str = PayoutChannel.PAGE,
) -> Payout:
    """Send a draft for approval after checking everything again, under the payout's lock.

    `channel` (page or API) is recorded as where it was submitted. The approval policy's amount
    limits are checked here: a payout that would exceed one is refused (`limit_exceeded` on
    `amount`, naming the limit and what is left), never sent to wait for more approvals.
    """
    from payouts.approval.policy import approval_policy_current, limit_breach_of

    if channel not in PayoutChannel.values:
        raise ValueError(f"unknown channel {channel!r}")
    with transaction.atomic():
        locked = own_draft_locked(by, payout)
        now = timezone.now()
        _recipient_payable(locked)
        problems = submission_problems(locked, now=now)
        if problems:
            raise PayoutInvalid(problems, code="not_ready")
        duplicates = identical_in_flight(locked)
        if duplicates and not confirm_duplicate:
            raise DuplicateNeedsConfirmation(duplicates)
        policy = approval_policy_current()
        if policy is not None and policy.limits:
            # Two submissions of one maker or to one recipient are counted one after the other.
            StaffUser.objects.select_for_update().filter(pk=locked.maker_id).first()
            Recipient.objects.select_for_update().filter(pk=locked.recipient_id).first()
            breach = limit_breach_of(locked, policy)
            if breach is not None:
                raise PayoutInvalid({"amount": [breach.message]}, code="limit_exceeded")
        if locked.channel != channel:
            locked.channel = channel
            locked.save(update_fields=["channel"])
        payout_transition(
            locked,
            PayoutStatus.PENDING_APPROVAL,
            source=ChangeSource.STAFF,
            by=by,
            at=now,
            audit="payout.submitted",
            details={
                "amount": locked.amount,
                "currency": locked.currency,
                "total_fees": locked.quote.total_fees
                if locked.quote
                else locked.preview_total_fees,
                "quote": locked.quote.upstream_id if locked.quote else None,
                "reserved_quote": locked.preview_quote_id or None,
                "documents": locked.documents.count(),
                "duplicate_confirmed": [p.pk for p in duplicates],
            },
        )
    return locked
