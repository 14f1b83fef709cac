"""Virtual-account and recipient writes: create through the gateway, refresh, apply events."""

from __future__ import annotations

import re
import uuid
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import (
    AccountType,
    Deposit,
    Recipient,
    RecipientKind,
    VirtualAccount,
    VirtualAccountMode,
    VirtualAccountStatus,
    VirtualAccountTimelineEntry,
)
from accounts.ordering import should_move
from accounts.validation import (
    normalise_bic,
    normalise_iban,
    normalise_routing_number,
    normalise_us_account_number,
    uses_iban,
)
from gateway.client import call_sync, upstream
from gateway.errors import UpstreamError
from gateway.models import Environment
from gateway.schemas import Recipient as UpstreamRecipient
from gateway.schemas import VirtualAccount as UpstreamVirtualAccount
from gateway.service_errors import service_error_from_upstream
from staff import roles
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.services import audit_record
from users.models import EndUser, TimelineKind
from users.services import EventDataError, _parse_time, record_refresh, require, timeline_add
from users.validation import country_name, normalise_country, normalise_email, normalise_name

CENTS = Decimal("0.01")
# The upstream says `user_id`; our API and forms say `end_user_id`.
RENAME = {"user_id": "end_user_id"}


def _va_snapshot(va: VirtualAccount) -> dict[str, Any]:
    return {
        "upstream_id": va.upstream_id,
        "end_user": va.end_user_id,
        "mode": va.mode,
        "status": va.status,
        "available_balance": va.available_balance,
        "currency": va.currency,
        "balance_as_of": va.balance_as_of,
    }


def _apply_va_record(va: VirtualAccount, data: dict[str, Any]) -> None:
    """A full upstream record (create/get answer) is current: take its status as it is."""
    status = str(data.get("status") or "").lower()
    if status in VirtualAccountStatus.values:
        va.status = status
        if status == VirtualAccountStatus.ACTIVE and va.activated_at is None:
            va.activated_at = timezone.now()
    for name in ("account_number", "routing_number", "currency", "type", "bank"):
        if data.get(name):
            setattr(va, name, str(data[name]))
    if data.get("mode") in VirtualAccountMode.values:
        va.mode = data["mode"]
    updated = _parse_time(data.get("updated_at"), field="updated_at")
    if updated and (va.upstream_updated_at is None or updated >= va.upstream_updated_at):
        va.upstream_updated_at = updated
    va.upstream_payload = data
    va.refreshed_at = timezone.now()


# --- virtual accounts: create ----------------------------------------------------------------


def virtual_account_create(
    *,
    end_user: EndUser,
    mode: str,
    by: StaffUser,
    request_key: uuid.UUID | None = None,
) -> VirtualAccount:
    """
    Open a virtual account for a verified end user. The upstream takes no idempotency key for
    this call (decisions.md 2), so the row is committed first and a retry after no answer first
    adopts an account the upstream made for this user that we do not know yet.
    """
    require(by, roles.ACCOUNTS_MANAGE)
    if mode not in VirtualAccountMode.values:
        raise ServiceError("Choose fiat or crypto.", errors=[("mode", "must be fiat or crypto")])
    if not end_user.is_synced or not end_user.is_verified:
        state = end_user.get_verification_status_display().lower()
        raise ServiceError(
            f"{end_user.display_name} is not verified (verification: {state}). Only verified "
            "end users can have a virtual account.",
            code="end_user_not_verified",
            errors=[("end_user_id", f"this end user is not verified ({state})")],
        )
    request_key = request_key or uuid.uuid4()
    try:
        with transaction.atomic():
            va, created = VirtualAccount.objects.get_or_create(
                environment_id=end_user.environment_id,
                request_key=request_key,
                defaults={"end_user": end_user, "mode": mode, "created_by": by},
            )
    except IntegrityError:
        va = VirtualAccount.objects.get(
            environment_id=end_user.environment_id, request_key=request_key
        )
        created = False
    if not created:
        if va.is_synced:
            return va
        adopted = _adopt_unknown_account(va)
        if adopted is not None:
            return _store_va_created(va, adopted, by=by)
    try:
        record = call_sync(
            upstream(end_user.environment).virtual_accounts.create,
            user_id=end_user.upstream_id,
            mode=mode,
        )
    except UpstreamError as exc:
        error = service_error_from_upstream(exc, rename=RENAME, what="the new virtual account")
        if error.status == 400:
            va.delete()
        raise error from exc
    return _store_va_created(va, record, by=by)


def _adopt_unknown_account(va: VirtualAccount) -> UpstreamVirtualAccount | None:
    """After no answer: the account the upstream may have made anyway (same user and mode)."""
    try:
        accounts = call_sync(
            upstream(va.environment).virtual_accounts.list, user_id=va.end_user.upstream_id
        )
    except UpstreamError:
        return None
    known = set(
        VirtualAccount.objects.filter(environment_id=va.environment_id)
        .exclude(upstream_id="")
        .values_list("upstream_id", flat=True)
    )
    unknown = [a for a in accounts if a.id not in known and (a.mode or "fiat") == va.mode]
    return unknown[0] if len(unknown) == 1 else None


def _store_va_created(
    va: VirtualAccount, record: UpstreamVirtualAccount, *, by: StaffUser
) -> VirtualAccount:
    with transaction.atomic():
        va = VirtualAccount.objects.select_for_update().get(pk=va.pk)
        if va.is_synced:
            return va
        early = (
            VirtualAccount.objects.select_for_update()
            .filter(environment_id=va.environment_id, upstream_id=record.id)
            .exclude(pk=va.pk)
            .first()
        )
        status_from_events = ""
        if early is not None:  # a webhook mirrored it before the create call returned
            VirtualAccountTimelineEntry.objects.filter(virtual_account=early).update(
                virtual_account=va
            )
            Deposit.objects.filter(virtual_account=early).update(virtual_account=va)
            status_from_events = early.status
            for name in ("account_number", "routing_number", "activated_at"):
                setattr(va, name, getattr(early, name) or getattr(va, name))
            early.delete()
        va.upstream_id = record.id
        _apply_va_record(va, record.model_dump(mode="json"))
        if status_from_events and should_move(va.status, status_from_events, is_new=False):
            va.status = status_from_events
        va.save()
        timeline_add(va, summary=f"Opened by {by.email} ({va.get_mode_display()})", actor=by)
        audit_record(
            actor=by,
            action="virtual_account.created",
            target=va,
            details={"before": None, "after": _va_snapshot(va)},
        )
    return va


# --- virtual accounts: refresh ---------------------------------------------------------------


def virtual_account_refresh(
    *, virtual_account: VirtualAccount, by: StaffUser | None
) -> VirtualAccount:
    """Status from the upstream, and the balance (with its as-of time) once active."""
    require(by, roles.DIRECTORY_VIEW)
    va = virtual_account
    if not va.is_synced:
        raise ServiceError("This virtual account is not created upstream yet.", code="not_synced")
    client = upstream(va.environment, background=by is None)
    try:
        record = call_sync(client.virtual_accounts.get, va.upstream_id)
        balance = (
            call_sync(client.virtual_accounts.balance, va.upstream_id)
            if str(record.status).lower() == VirtualAccountStatus.ACTIVE
            else None
        )
    except UpstreamError as exc:
        raise service_error_from_upstream(exc, what="the refresh") from exc
    with transaction.atomic():
        va = VirtualAccount.objects.select_for_update().get(pk=va.pk)
        before = _va_snapshot(va)
        _apply_va_record(va, record.model_dump(mode="json"))
        if balance is not None:
            as_of = balance.updated_at or timezone.now()
            if va.balance_as_of is None or as_of >= va.balance_as_of:
                va.available_balance = balance.available_balance.quantize(CENTS)
                va.currency = balance.currency
                va.balance_as_of = as_of
        va.save()
        record_refresh(
            va,
            before=before,
            after=_va_snapshot(va),
            by=by,
            action="virtual_account.refreshed",
        )
    return va


def _queue_va_refresh(va: VirtualAccount) -> None:
    from django_q.tasks import async_task

    from accounts.tasks import virtual_account_refresh_task

    pk = va.pk
    transaction.on_commit(lambda: async_task(virtual_account_refresh_task, pk))


# --- virtual accounts: events ----------------------------------------------------------------

VA_EVENTS = (
    "virtual_account.created",
    "virtual_account.activated",
    "virtual_account.deposit_funds_received",
)


def _end_user_mirror(environment: Environment, user_id: str) -> EndUser:
    """The end user an event names; an unknown one is mirrored (its refresh fills the rest)."""
    from users.services import _queue_refresh

    end_user = EndUser.objects.filter(environment=environment, upstream_id=user_id).first()
    if end_user is None:
        try:
            with transaction.atomic():
                end_user = EndUser.objects.create(environment=environment, upstream_id=user_id)
        except IntegrityError:
            return EndUser.objects.get(environment=environment, upstream_id=user_id)
        _queue_refresh(end_user)
    return end_user


def virtual_account_apply_event(
    *, environment: Environment, event_type: str, data: dict[str, Any]
) -> VirtualAccount | None:
    """
    Apply virtual_account.created / .activated / .deposit_funds_received: idempotent (an
    event_id once per account, a deposit once per deposit_id), order-tolerant (a status only
    moves forward, accounts.ordering), mirroring an unknown account. Raises EventDataError on
    data it cannot read.
    """
    if event_type not in VA_EVENTS:
        raise EventDataError(f"not a virtual account event: {event_type!r}")
    if not isinstance(data, dict):
        raise EventDataError("event data must be an object")
    account_id = str(data.get("virtual_account_id") or "").strip()
    if not account_id:
        raise EventDataError(f"{event_type} without virtual_account_id")
    event_id = str(data.get("event_id") or "")
    deposit = event_type == "virtual_account.deposit_funds_received"
    amount = None
    if deposit:
        try:
            amount = Decimal(str(data.get("amount")))
        except InvalidOperation:
            raise EventDataError(f"amount {data.get('amount')!r} is not a decimal") from None
        if not amount.is_finite() or amount <= 0 or amount != amount.quantize(CENTS):
            raise EventDataError(f"amount {data.get('amount')!r} is not a positive cent amount")
        if not data.get("deposit_id") or not re.fullmatch(r"[A-Z]{3}", str(data.get("currency"))):
            raise EventDataError("a deposit needs deposit_id and a three-letter currency")
        received_at = _parse_time(data.get("created_at"), field="created_at") or timezone.now()
    incoming = ""
    if not deposit:
        incoming = str(data.get("status") or "").lower() or (
            "active" if event_type.endswith("activated") else "activating"
        )
        if incoming not in VirtualAccountStatus.values:
            raise EventDataError(f"status {data.get('status')!r} is not a virtual account status")
    user_id = str(data.get("user_id") or "").strip()
    if not deposit and not user_id:
        raise EventDataError(f"{event_type} without user_id")

    fetched = None
    if (
        deposit
        and not VirtualAccount.objects.filter(
            environment=environment, upstream_id=account_id
        ).exists()
    ):
        # A deposit names no user: ask the upstream whose account this is (outside any lock).
        fetched = call_sync(upstream(environment, background=True).virtual_accounts.get, account_id)
        user_id = str(fetched.user_id or "")
        if not user_id:
            raise EventDataError(f"the upstream names no user for account {account_id}")

    with transaction.atomic():
        va = (
            VirtualAccount.objects.select_for_update()
            .filter(environment=environment, upstream_id=account_id)
            .first()
        )
        is_new = va is None
        if va is None:
            va = VirtualAccount(
                environment=environment,
                upstream_id=account_id,
                end_user=_end_user_mirror(environment, user_id),
            )
            if fetched is not None:
                _apply_va_record(va, fetched.model_dump(mode="json"))
            try:
                with transaction.atomic():  # a concurrent first event may create it too
                    va.save()
            except IntegrityError:
                is_new = False
                va = VirtualAccount.objects.select_for_update().get(
                    environment=environment, upstream_id=account_id
                )
        if not is_new and event_id and va.timeline.filter(event_id=event_id).exists():
            return va
        before = _va_snapshot(va)
        applied = True
        if deposit:
            assert amount is not None
            raw_source = data.get("source")
            source: dict[str, Any] = raw_source if isinstance(raw_source, dict) else {}
            _, applied = Deposit.objects.get_or_create(
                virtual_account=va,
                deposit_id=str(data["deposit_id"]),
                defaults={
                    "event_id": event_id,
                    "amount": amount,
                    "currency": str(data["currency"]),
                    "payment_rail": str(source.get("payment_rail") or ""),
                    "sender_name": str(source.get("sender_name") or ""),
                    "trace_number": str(source.get("trace_number") or ""),
                    "received_at": received_at,
                    "upstream_payload": data,
                },
            )
            summary = f"Deposit received: {amount:,.2f} {data['currency']}" + (
                f" from {source.get('sender_name')}" if source.get("sender_name") else ""
            )
            if applied:
                # The event says what arrived, not the balance after it: ask for the balance.
                _queue_va_refresh(va)
        else:
            applied = should_move(va.status, incoming, is_new=is_new)
            if applied:
                va.status = incoming
                if incoming == VirtualAccountStatus.ACTIVE:
                    va.activated_at = va.activated_at or timezone.now()
            # Activation details never go stale: keep them whatever the order.
            for name in ("account_number", "routing_number"):
                if data.get(name) and not getattr(va, name):
                    setattr(va, name, str(data[name]))
                    applied = True
            summary = {
                "virtual_account.created": "Created upstream (activating)",
                "virtual_account.activated": "Activated",
            }[event_type]
        if applied:
            va.upstream_payload = {**va.upstream_payload, "last_event": data}
        va.save()
        timeline_add(
            va,
            kind=TimelineKind.EVENT,
            event_type=event_type,
            event_id=event_id,
            applied=applied,
            summary=summary + ("" if applied else " (ignored: older than our state)"),
            data=data,
        )
        if applied:
            audit_record(
                actor=None,
                action=f"virtual_account.event.{event_type}",
                target=va,
                details={"before": before, "after": _va_snapshot(va), "event_id": event_id},
            )
    return va


# --- recipients ------------------------------------------------------------------------------


def _recipient_snapshot(recipient: Recipient) -> dict[str, Any]:
    return {
        "upstream_id": recipient.upstream_id,
        "end_user": recipient.end_user_id,
        "kind": recipient.kind,
        "name": recipient.display_name,
        "email": recipient.email,
        "country": recipient.country,
        "account_type": recipient.account_type,
        "account_number": recipient.masked_account_number,
        "routing_number": recipient.routing_number,
        "swift_code": recipient.swift_code,
    }


def validate_recipient(values: dict[str, Any]) -> dict[str, Any]:
    """Checked, normalised recipient fields (flat), or a ServiceError with API field names."""
    problems: list[tuple[str, str]] = []
    clean: dict[str, Any] = {}

    def check(field: str, func: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ValueError as exc:
            problems.append((field, str(exc)))
            return ""

    kind = str(values.get("kind") or "").strip().lower()
    if kind not in RecipientKind.values:
        problems.append(("kind", "Choose individual or company."))
    clean["kind"] = kind
    if kind == RecipientKind.COMPANY:
        clean["company_name"] = check(
            "company_name", normalise_name, values.get("company_name"), label="company name"
        )
        clean["first_name"] = clean["last_name"] = ""
    else:
        clean["first_name"] = check(
            "first_name", normalise_name, values.get("first_name"), label="first name"
        )
        clean["last_name"] = check(
            "last_name", normalise_name, values.get("last_name"), label="last name"
        )
        clean["company_name"] = ""
    email = str(values.get("email") or "").strip()
    clean["email"] = check("email", normalise_email, email) if email else ""
    clean["street_name"] = check(
        "address.street_name", normalise_name, values.get("street_name"), label="street"
    )
    clean["city"] = check("address.city", normalise_name, values.get("city"), label="city")
    clean["state"] = " ".join(str(values.get("state") or "").split())[:100]
    clean["postal_code"] = " ".join(str(values.get("postal_code") or "").split())[:20]
    clean["country"] = check("address.country", normalise_country, values.get("country") or "")
    account_type = str(values.get("account_type") or "").strip().upper()
    clean["account_type"] = account_type
    clean["bank_name"] = " ".join(str(values.get("bank_name") or "").split())[:200]
    number = str(values.get("account_number") or "")
    clean["routing_number"] = clean["swift_code"] = ""
    if account_type == AccountType.WIRE:
        clean["routing_number"] = check(
            "account.routing_number", normalise_routing_number, values.get("routing_number") or ""
        )
        clean["account_number"] = check(
            "account.account_number", normalise_us_account_number, number
        )
    elif account_type == AccountType.SWIFT:
        clean["swift_code"] = check(
            "account.swift_code", normalise_bic, values.get("swift_code") or ""
        )
        bank_country = clean["swift_code"][4:6] if clean["swift_code"] else ""
        if bank_country and uses_iban(bank_country):
            clean["account_number"] = check(
                "account.account_number", normalise_iban, number, country=bank_country
            )
            if not clean["account_number"]:
                problems[-1] = (
                    "account.account_number",
                    problems[-1][1]
                    + f" Banks in {country_name(bank_country)} use an IBAN as the account number.",
                )
        else:
            compact = re.sub(r"[\s-]", "", number).upper()
            if not re.fullmatch(r"[A-Z0-9]{4,34}", compact):
                problems.append(
                    (
                        "account.account_number",
                        "Enter the account number (4 to 34 letters or digits).",
                    )
                )
            clean["account_number"] = compact
    else:
        problems.append(("account.account_type", "Choose WIRE or SWIFT."))
    if problems:
        raise ServiceError("Some fields need correcting.", errors=problems)
    return clean


def _recipient_body(clean: dict[str, Any], end_user: EndUser) -> dict[str, Any]:
    """The upstream's body (decisions.md 2 "Recipients")."""
    address = {k: clean[k] for k in ("street_name", "city", "state", "postal_code", "country")}
    account = {
        "account_type": clean["account_type"],
        "account_number": clean["account_number"],
        "bank_name": clean["bank_name"],
    }
    if clean["account_type"] == AccountType.WIRE:
        account["routing_number"] = clean["routing_number"]
    else:
        account["swift_code"] = clean["swift_code"]
    body: dict[str, Any] = {
        "user_id": end_user.upstream_id,
        "email": clean["email"],
        "address": {k: v for k, v in address.items() if v},
        "account": {k: v for k, v in account.items() if v},
    }
    if clean["kind"] == RecipientKind.COMPANY:
        body["company_name"] = clean["company_name"]
    else:
        body["first_name"], body["last_name"] = clean["first_name"], clean["last_name"]
    return body


def recipient_create(
    *,
    end_user: EndUser,
    by: StaffUser,
    values: dict[str, Any],
    request_key: uuid.UUID | None = None,
) -> Recipient:
    """
    Register a payee: checked here first (names, address, ABA checksum, BIC, IBAN), then sent;
    the upstream's own field errors come back on the same field names. A refusal leaves nothing;
    no answer keeps the row pending, and the retry adopts what the upstream may have made.
    """
    require(by, roles.ACCOUNTS_MANAGE)
    clean = validate_recipient(values)
    if not end_user.is_synced:
        raise ServiceError(
            "This end user is not created upstream yet.",
            errors=[("end_user_id", "not created upstream yet")],
        )
    request_key = request_key or uuid.uuid4()
    try:
        with transaction.atomic():
            recipient, created = Recipient.objects.get_or_create(
                environment_id=end_user.environment_id,
                request_key=request_key,
                defaults={**clean, "end_user": end_user, "created_by": by},
            )
    except IntegrityError:
        recipient = Recipient.objects.get(
            environment_id=end_user.environment_id, request_key=request_key
        )
        created = False
    if not created:
        if recipient.is_synced:
            return recipient
        adopted = _adopt_unknown_recipient(recipient)
        if adopted is not None:
            return _store_recipient_created(recipient, adopted, by=by)
    body = _recipient_body(clean, end_user)
    try:
        record = call_sync(upstream(end_user.environment).recipients.create, **body)
    except UpstreamError as exc:
        error = service_error_from_upstream(exc, rename=RENAME, what="the new recipient")
        if error.status in (400, 404):
            recipient.delete()
        raise error from exc
    return _store_recipient_created(recipient, record, by=by)


def _adopt_unknown_recipient(recipient: Recipient) -> UpstreamRecipient | None:
    try:
        page = call_sync(
            upstream(recipient.environment).recipients.list,
            user_id=recipient.end_user.upstream_id,
        )
    except UpstreamError:
        return None
    known = set(
        Recipient.objects.filter(environment_id=recipient.environment_id)
        .exclude(upstream_id="")
        .values_list("upstream_id", flat=True)
    )
    matches = [
        r
        for r in page.recipients
        if r.recipient_id not in known
        and (r.account or {}).get("account_number") == recipient.account_number
    ]
    return matches[0] if len(matches) == 1 else None


def _store_recipient_created(
    recipient: Recipient, record: UpstreamRecipient, *, by: StaffUser
) -> Recipient:
    with transaction.atomic():
        recipient = Recipient.objects.select_for_update().get(pk=recipient.pk)
        if recipient.is_synced:
            return recipient
        recipient.upstream_id = record.recipient_id
        recipient.upstream_created_at = record.created_ts
        recipient.upstream_payload = record.model_dump(mode="json")
        recipient.refreshed_at = timezone.now()
        recipient.save()
        timeline_add(recipient, summary=f"Registered by {by.email}", actor=by)
        audit_record(
            actor=by,
            action="recipient.created",
            target=recipient,
            details={"before": None, "after": _recipient_snapshot(recipient)},
        )
    return recipient


def recipient_refresh(*, recipient: Recipient, by: StaffUser | None) -> Recipient:
    """Keep the upstream's current record of the recipient (shown on the detail page)."""
    require(by, roles.DIRECTORY_VIEW)
    if not recipient.is_synced:
        raise ServiceError("This recipient is not created upstream yet.", code="not_synced")
    try:
        record = call_sync(upstream(recipient.environment).recipients.get, recipient.upstream_id)
    except UpstreamError as exc:
        raise service_error_from_upstream(exc, what="the refresh") from exc
    with transaction.atomic():
        recipient = Recipient.objects.select_for_update().get(pk=recipient.pk)
        recipient.upstream_payload = record.model_dump(mode="json")
        recipient.refreshed_at = timezone.now()
        recipient.save(update_fields=["upstream_payload", "refreshed_at", "updated_at"])
    return recipient
