"""Payout writes: drafts (create, edit, delete), preview and reservation, documents, submission."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from accounts.models import Recipient, VirtualAccount
from gateway.errors import BudgetExhausted, TemporaryError, UpstreamError
from gateway.models import Environment
from gateway.service_errors import unanswered
from payouts.drafts.documents import DocumentRejected, check_upload
from payouts.drafts.pricing import fees_json, preview_upstream
from payouts.errors import DuplicateNeedsConfirmation, PayoutInvalid
from payouts.models import (
    INTERNAL_NOTES_MAX,
    MEMO_MAX,
    REFERENCE_MAX,
    ChangeSource,
    DocumentKind,
    Payout,
    PayoutDocument,
    PayoutMode,
    PayoutStatus,
    PayoutStatusChange,
    ReservationStatus,
)
from payouts.states import EDITABLE, IN_FLIGHT, payout_transition
from quotes.choices import STABLECOINS, Choices
from quotes.models import Quote
from staff.models import StaffUser
from staff.roles import PAYOUT_INITIATE
from staff.services import audit_record

MAX_AMOUNT = Decimal("999999.99")  # interface.md 8: payout amount
CENT = Decimal("0.01")
PAYOUT_RAILS = ("WIRE", "SWIFT")  # interface.md 4.4 rule 5
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


def _require_initiator(user: StaffUser) -> None:
    if not user.has_perm(PAYOUT_INITIATE):
        raise PermissionDenied("Only finance makers prepare payouts.")


def _require_own_draft(user: StaffUser, payout: Payout) -> None:
    _require_initiator(user)
    if payout.maker_id != user.pk:
        raise PermissionDenied("Only the payout's maker may change it.")
    if payout.status not in EDITABLE:
        raise PayoutInvalid(
            {"": [f"The payout is {payout.get_status_display().lower()}: only a draft changes."]},
            code="not_a_draft",
        )


def _add(errors: dict[str, list[str]], name: str, message: str) -> None:
    errors.setdefault(name, []).append(message)


def _check_amount(amount: Decimal, errors: dict[str, list[str]]) -> None:
    if amount <= 0:
        _add(errors, "amount", "The amount must be greater than 0.")
    elif amount > MAX_AMOUNT:
        _add(errors, "amount", "The amount is at most 999,999.99.")
    elif amount != amount.quantize(CENT):
        _add(errors, "amount", "The amount has at most 2 decimals.")


def _check_quote(quote: Quote, payout: Payout, errors: dict[str, list[str]], now: datetime) -> None:
    """The quote must be usable and fit the payout as the upstream will require (QUOTE_MISMATCH)."""
    if quote.environment_id != payout.environment_id:
        _add(errors, "quote", "The quote belongs to another environment.")
        return
    if not quote.is_usable(now):
        _add(errors, "quote", "The quote has expired or was used: request a new one.")
    source = payout.payment_currency if payout.mode == PayoutMode.CRYPTO else "USD"
    if quote.base_currency != (source or "USD"):
        _add(
            errors,
            "quote",
            f"The quote is funded in {quote.base_currency}, the payout in {source or 'USD'}.",
        )
    elif payout.mode == PayoutMode.CRYPTO and quote.network != payout.payment_network:
        # Another network has another network fee: the quote's figures would not be charged.
        _add(
            errors,
            "quote",
            f"The quote is funded on {quote.network or 'no network'}, "
            f"the payout on {payout.payment_network}.",
        )
    rail = payout.recipient.account_type if payout.recipient_id else ""
    if quote.quote_currency != "USD" or (rail and quote.account_type != rail):
        _add(
            errors,
            "quote",
            f"The quote is for {quote.quote_currency} on {quote.account_type}; "
            f"the recipient is paid in USD on {rail or '?'}.",
        )
    if quote.amount_in_destination:
        _add(errors, "quote", "A quote priced by the amount to arrive cannot fund a payout.")
    if payout.amount != quote.base_amount:
        _add(
            errors,
            "amount",
            f"With this quote the amount must be {quote.base_amount} (the quote's source amount).",
        )


def _validate(payout: Payout, *, now: datetime) -> dict[str, list[str]]:
    """Every rule a draft must satisfy to be saved (submission adds the money checks)."""
    errors: dict[str, list[str]] = {}
    account = payout.virtual_account
    if account.environment_id != payout.environment_id:
        _add(errors, "virtual_account", "The virtual account belongs to another environment.")
    elif account.status != "active" or not account.upstream_id:
        _add(errors, "virtual_account", f"The virtual account is {account.status}, not active.")
    recipient = payout.recipient
    if recipient.environment_id != payout.environment_id:
        _add(errors, "recipient", "The recipient belongs to another environment.")
    elif not recipient.upstream_id:
        _add(errors, "recipient", "The recipient is not registered with the upstream yet.")
    elif recipient.account_type not in PAYOUT_RAILS:
        _add(errors, "recipient", "Payouts go to WIRE or SWIFT recipients only.")
    _check_amount(payout.amount, errors)
    if len(payout.reference) > REFERENCE_MAX:
        _add(errors, "reference", f"At most {REFERENCE_MAX} characters.")
    if len(payout.memo) > MEMO_MAX:
        _add(errors, "memo", f"At most {MEMO_MAX} characters.")
    if len(payout.internal_notes) > INTERNAL_NOTES_MAX:
        _add(errors, "internal_notes", f"At most {INTERNAL_NOTES_MAX} characters.")
    if payout.mode == PayoutMode.CRYPTO:
        choices = Choices(payout.environment)
        if payout.payment_currency not in STABLECOINS:
            _add(
                errors,
                "payment_currency",
                f"A crypto payout names its stablecoin: {', '.join(STABLECOINS)}.",
            )
        else:
            networks = choices.networks(payout.payment_currency)
            if payout.payment_network not in networks:
                _add(
                    errors,
                    "payment_network",
                    f"{payout.payment_currency} networks: {', '.join(networks)}.",
                )
    elif payout.payment_currency or payout.payment_network:
        _add(
            errors,
            "payment_currency",
            "A fiat virtual account takes no payment instructions (stablecoin, network).",
        )
    if payout.quote_id is not None:
        assert payout.quote is not None
        _check_quote(payout.quote, payout, errors, now)
        if payout.client_markup is not None:
            _add(errors, "client_markup", "A quote fixes the fees: no client markup with it.")
    for name in ("percentage_fee", "fx_markup"):
        value = getattr(payout, f"client_markup_{name}")
        if value is not None and not (Decimal(0) <= value < 1):
            _add(errors, "client_markup", f"{name} is a fraction between 0 and 1 (0.01 is 1 %).")
    if payout.client_markup_fixed_fee is not None and payout.client_markup_fixed_fee < 0:
        _add(errors, "client_markup", "fixed_fee cannot be negative.")
    return errors


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


def payout_draft_create(*, by: StaffUser, environment: Environment, values: DraftValues) -> Payout:
    """A new draft of `by`; its idempotency key is created with the row."""
    _require_initiator(by)
    missing: dict[str, list[str]] = {}
    if values.virtual_account is None:
        _add(missing, "virtual_account", "Choose the virtual account to pay from.")
    if values.recipient is None:
        _add(missing, "recipient", "Choose the recipient.")
    if values.amount is None and values.quote is None:
        _add(missing, "amount", "Give an amount or choose an active quote.")
    if missing:
        raise PayoutInvalid(missing)
    now = timezone.now()
    payout = Payout(environment=environment, maker=by, created_at=now, updated_at=now)
    _apply(payout, values)
    errors = _validate(payout, now=now)
    if errors:
        raise PayoutInvalid(errors)
    with transaction.atomic():
        payout.save()
        _timeline_start(payout, by=by)
        audit_record(
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


def _lock_own_draft(by: StaffUser, payout: Payout) -> Payout:
    """The draft re-read under its row lock with what an edit or a submission reads, and only
    for its maker (call inside the transaction)."""
    locked = (
        # Lock the payout row only: its optional quote is an outer join PostgreSQL refuses.
        Payout.objects.select_for_update(of=("self",))
        .select_related("virtual_account", "recipient", "quote", "environment")
        .get(pk=payout.pk)
    )
    _require_own_draft(by, locked)
    return locked


def payout_draft_update(*, by: StaffUser, payout: Payout, values: DraftValues) -> Payout:
    """Edit a draft (its maker only). A change of what is priced drops the stale preview."""
    with transaction.atomic():
        locked = _lock_own_draft(by, payout)
        changes = _apply(locked, values)
        if not changes:
            return locked
        now = timezone.now()
        errors = _validate(locked, now=now)
        if errors:
            raise PayoutInvalid(errors)
        if any(name in changes for name in PRICED_FIELDS) or any(
            name.startswith("client_markup") for name in changes
        ):
            _clear_preview(locked)
        locked.updated_at = now
        locked.save()
        audit_record(
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
        _require_own_draft(by, locked)
        files = [(doc.file.storage, str(doc.file.name)) for doc in locked.documents.all()]
        audit_record(
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


def payout_preview(*, by: StaffUser, payout: Payout, reserve: bool = False) -> Payout:
    """The upstream's payout preview (fees, what the recipient gets); `reserve` locks the price
    for 15 minutes as a quote the payout will redeem."""
    _require_own_draft(by, payout)
    errors = _validate(payout, now=timezone.now())
    if errors:
        raise PayoutInvalid(errors)
    if reserve and payout.quote_id is not None:
        raise PayoutInvalid({"quote": ["The payout already uses a quote: nothing to reserve."]})
    try:
        preview = preview_upstream(payout, reserve=reserve)
    except UpstreamError as exc:
        raise upstream_refusal(exc) from exc
    fees = preview.fees
    with transaction.atomic():
        locked = Payout.objects.select_for_update().get(pk=payout.pk)
        _require_own_draft(by, locked)
        if (
            locked.amount != payout.amount
            or locked.recipient_id != payout.recipient_id
            or locked.payment_instructions != payout.payment_instructions
        ):
            raise PayoutInvalid({"": ["The draft changed during the preview: preview again."]})
        locked.preview_fees = fees_json(fees)
        locked.preview_total_fees = fees.total_fees if fees else None
        locked.preview_recipient_amount = preview.recipient_amount
        locked.preview_recipient_currency = preview.recipient_currency
        locked.previewed_at = timezone.now()
        if preview.quote_id:
            locked.preview_quote_id = preview.quote_id
            locked.preview_quote_expires_at = preview.quote_expires_at
            locked.preview_quote_status = ReservationStatus.ACTIVE
        elif not reserve:
            locked.preview_quote_id = ""
            locked.preview_quote_expires_at = None
            locked.preview_quote_status = ReservationStatus.NONE
        locked.updated_at = timezone.now()
        locked.save()
        audit_record(
            actor=by,
            action="payout.previewed",
            target=locked,
            details={
                "amount": locked.amount,
                "fees": locked.preview_fees,
                "total_fees": locked.preview_total_fees,
                "total": locked.preview_total,
                "total_currency": locked.total_currency,
                "recipient_amount": locked.preview_recipient_amount,
                "recipient_currency": locked.preview_recipient_currency,
                "reserved_quote": locked.preview_quote_id or None,
                "reserved_until": locked.preview_quote_expires_at,
            },
        )
    return locked


# The upstream's field names on payout calls, mapped to ours.
UPSTREAM_FIELDS = {
    "virtual_account_id": "virtual_account",
    "recipient_id": "recipient",
    "amount": "amount",
    "quote_id": "quote",
    "client_markup": "client_markup",
    "payment_instructions": "payment_currency",
}


def upstream_refusal(exc: UpstreamError) -> PayoutInvalid:
    """The upstream's failure as the draft's error: unanswered (503 in the API) or refused."""
    if isinstance(exc, TemporaryError | BudgetExhausted):
        return PayoutInvalid(
            {
                "": [
                    f"{unanswered(exc)}: nothing was saved or charged. Try again in a minute; "
                    "the draft is as you left it."
                ]
            },
            code="upstream_unavailable",
        )
    errors: dict[str, list[str]] = {}
    for name, messages in exc.form_errors().items():
        target = UPSTREAM_FIELDS.get(name.split(".")[0], "")
        for message in messages:
            _add(errors, target, message if target else f"{name}: {message}")
    if not errors:
        _add(errors, "", f"The upstream refused: {exc.message}")
    return PayoutInvalid(errors, code=exc.code or "upstream_refused")


def document_add(
    *, by: StaffUser, payout: Payout, upload: UploadedFile, kind: str = "invoice"
) -> PayoutDocument:
    """Check the upload by its content, store it through the storage API, hash it."""
    _require_own_draft(by, payout)
    try:
        checked = check_upload(upload)
    except DocumentRejected as exc:
        raise PayoutInvalid({"file": [str(exc)]}, code="document_rejected") from exc
    if kind not in DocumentKind.values:
        raise PayoutInvalid({"kind": [f"One of: {', '.join(DocumentKind.values)}."]})
    with transaction.atomic():
        locked = Payout.objects.select_for_update().get(pk=payout.pk)
        _require_own_draft(by, locked)
        document = PayoutDocument(
            payout=locked,
            kind=kind,
            file_name=checked.file_name,
            content_type=checked.content_type,
            size=len(checked.content),
            sha256=PayoutDocument.digest(checked.content),
            uploaded_by=by,
        )
        document.file.save(f"document{checked.extension}", ContentFile(checked.content), save=False)
        stored = str(document.file.name)
        try:
            document.save()
            audit_record(
                actor=by,
                action="payout.document_added",
                target=locked,
                details={
                    "document": document.pk,
                    "file_name": document.file_name,
                    "content_type": document.content_type,
                    "size": document.size,
                    "sha256": document.sha256,
                },
            )
        except Exception:
            document.file.storage.delete(stored)  # nothing half done: no orphan file
            raise
    return document


def document_remove(*, by: StaffUser, document: PayoutDocument) -> None:
    """Remove a document while its payout is a draft (its maker only)."""
    with transaction.atomic():
        payout = Payout.objects.select_for_update().get(pk=document.payout_id)
        _require_own_draft(by, payout)
        storage, name = document.file.storage, str(document.file.name)
        audit_record(
            actor=by,
            action="payout.document_removed",
            target=payout,
            details={
                "document": document.pk,
                "file_name": document.file_name,
                "sha256": document.sha256,
            },
        )
        document.delete()
        transaction.on_commit(lambda: storage.delete(name))


def submission_problems(payout: Payout, *, now: datetime) -> dict[str, list[str]]:
    """Everything that stops a draft from going for approval, each said exactly."""
    errors = _validate(payout, now=now)
    account = payout.virtual_account
    fees = payout.quote.total_fees if payout.quote is not None else payout.preview_total_fees
    if payout.quote is None and payout.previewed_at is None:
        _add(errors, "preview", "Preview the payout so its fees are known.")
    if (
        payout.preview_quote_status == ReservationStatus.ACTIVE
        and (payout.preview_quote_expires_at is None or payout.preview_quote_expires_at <= now)
    ) or payout.preview_quote_status == ReservationStatus.EXPIRED:
        _add(errors, "preview", "The reserved preview quote has expired: preview again.")
    if payout.mode == PayoutMode.FIAT and fees is not None and "virtual_account" not in errors:
        needed = payout.amount + fees
        balance = account.available_balance
        if balance is None:
            _add(errors, "virtual_account", "The account's balance is not known yet: refresh it.")
        elif balance < needed:
            as_of = (
                f" as of {account.balance_as_of:%Y-%m-%d %H:%M} UTC"
                if account.balance_as_of
                else ""
            )
            _add(
                errors,
                "virtual_account",
                f"The balance{as_of} is {balance} {account.currency}; the payout needs "
                f"{needed} {payout.currency} (amount {payout.amount} plus fees {fees}).",
            )
    if payout.mode == PayoutMode.CRYPTO and not payout.documents.exists():
        _add(errors, "documents", "A crypto payout needs at least one supporting document.")
    return errors


def identical_in_flight(payout: Payout) -> list[Payout]:
    return list(
        Payout.objects.filter(
            environment_id=payout.environment_id,
            virtual_account_id=payout.virtual_account_id,
            recipient_id=payout.recipient_id,
            amount=payout.amount,
            status__in=IN_FLIGHT,
        ).exclude(pk=payout.pk)
    )


def payout_send_for_approval(
    *, by: StaffUser, payout: Payout, confirm_duplicate: bool = False
) -> Payout:
    """Send a draft for approval after checking everything again, under the payout's lock."""
    with transaction.atomic():
        locked = _lock_own_draft(by, payout)
        now = timezone.now()
        problems = submission_problems(locked, now=now)
        if problems:
            raise PayoutInvalid(problems, code="not_ready")
        duplicates = identical_in_flight(locked)
        if duplicates and not confirm_duplicate:
            raise DuplicateNeedsConfirmation(duplicates)
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


def reservations_expire_due(*, now: datetime | None = None) -> int:
    """Housekeeping: reserved preview quotes past their expiry are marked EXPIRED."""
    moment = now or timezone.now()
    with transaction.atomic():
        count = Payout.objects.filter(
            preview_quote_status=ReservationStatus.ACTIVE, preview_quote_expires_at__lte=moment
        ).update(preview_quote_status=ReservationStatus.EXPIRED, updated_at=moment)
        if count:
            audit_record(
                actor=None, action="payouts.reservations_expired", details={"count": count}
            )
    return count
