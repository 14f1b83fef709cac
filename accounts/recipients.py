"""Recipient writes: check a payee's fields, register it through the gateway, refresh it."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import AccountType, Recipient, RecipientKind, RecipientStatus
from accounts.validation import (
    normalise_bic,
    normalise_iban,
    normalise_routing_number,
    normalise_us_account_number,
    uses_iban,
)
from accounts.virtual_accounts import RENAME
from gateway.client import call_sync, upstream
from gateway.schemas import Recipient as UpstreamRecipient
from staff import roles
from staff.errors import ServiceError
from staff.models import StaffUser
from users.mirror import (
    MirrorKind,
    mirror_create,
    require,
    upstream_answer,
)
from users.models import EndUser
from users.validation import country_name, normalise_country, normalise_email, normalise_name

# The audit snapshot: key -> attribute (the account number masked).
SNAPSHOT_FIELDS = {
    "upstream_id": "upstream_id",
    "end_user": "end_user_id",
    "kind": "kind",
    "name": "display_name",
    "email": "email",
    "country": "country",
    "account_type": "account_type",
    "account_number": "masked_account_number",
    "routing_number": "routing_number",
    "swift_code": "swift_code",
}


# --- who may approve (dual control) ---------------------------------------------------------

_approver_roles_provider: Callable[[], Iterable[str]] | None = None


def register_recipient_approver_roles(provider: Callable[[], Iterable[str]] | None) -> None:
    """
    A higher app (the payouts approval policy) names the roles whose holders may approve
    recipients and changes to them; `provider()` is read at each decision. None restores the
    default, the setting PAYOPS_RECIPIENT_APPROVER_ROLES.
    """
    global _approver_roles_provider
    _approver_roles_provider = provider


def recipient_approver_roles() -> frozenset[str]:
    """The role keys that may approve a recipient now (the registered policy's, else the
    setting's). An empty list from a provider falls back to the setting: never nobody-checks."""
    provided = list(_approver_roles_provider()) if _approver_roles_provider else []
    return frozenset(provided or settings.PAYOPS_RECIPIENT_APPROVER_ROLES)


class RecipientNotApproved(ServiceError):
    """A payout to a recipient that is not approved (pending, rejected, changed, archived)."""

    status = 409

    def __init__(self, message: str, *, field: str = "recipient") -> None:
        super().__init__(message, code="recipient_not_approved", errors=[(field, message)])


def recipient_not_payable_reason(recipient: Recipient) -> str:
    """Why no payout may go to `recipient` now ("" when it may): dual control's one rule."""
    name = recipient.display_name
    if recipient.status == RecipientStatus.PENDING_APPROVAL:
        return gettext(
            "%(name)s is waiting for a second person's approval of its bank details; "
            "nobody else has approved this recipient yet."
        ) % {"name": name}
    if recipient.status == RecipientStatus.REJECTED:
        return gettext("%(name)s was rejected (%(reason)s); it cannot be paid.") % {
            "name": name,
            "reason": recipient.rejection_reason,
        }
    if recipient.status == RecipientStatus.SUPERSEDED:
        return gettext(
            "The bank details of %(name)s were changed; these old details can no longer be "
            "paid. Choose the recipient's current version."
        ) % {"name": name}
    if recipient.status == RecipientStatus.ARCHIVED:
        return gettext("%(name)s is archived; it cannot be paid.") % {"name": name}
    if not recipient.is_synced:
        return gettext("%(name)s is not registered with the upstream yet.") % {"name": name}
    return ""


def recipient_payable_require(recipient: Recipient, *, field: str = "recipient") -> None:
    """Refuse (409 `recipient_not_approved`, on `field`) unless the recipient is payable."""
    reason = recipient_not_payable_reason(recipient)
    if reason:
        raise RecipientNotApproved(reason, field=field)


# --- checking --------------------------------------------------------------------------------


class _Checks:
    """Runs normalisers, keeping each one's refusal as a problem on an API field name."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []

    def __call__(self, field: str, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ValueError as exc:
            self.problems.append((field, str(exc)))
            return ""


def _spaces(value: Any, limit: int) -> str:
    return " ".join(str(value or "").split())[:limit]


def validate_recipient(values: dict[str, Any]) -> dict[str, Any]:
    """Checked, normalised recipient fields (flat), or a ServiceError with API field names."""
    check = _Checks()
    clean = {
        **_check_names(values, check),
        **_check_address(values, check),
        **_check_bank_account(values, check),
    }
    if check.problems:
        raise ServiceError(gettext("Some fields need correcting."), errors=check.problems)
    return clean


def _check_names(values: dict[str, Any], check: _Checks) -> dict[str, Any]:
    kind = str(values.get("kind") or "").strip().lower()
    if kind not in RecipientKind.values:
        check.problems.append(("kind", gettext("Choose individual or company.")))
    clean: dict[str, Any] = {"kind": kind}
    if kind == RecipientKind.COMPANY:
        clean["company_name"] = check(
            "company_name",
            normalise_name,
            values.get("company_name"),
            label=gettext("company name"),
        )
        clean["first_name"] = clean["last_name"] = ""
    else:
        clean["first_name"] = check(
            "first_name", normalise_name, values.get("first_name"), label=gettext("first name")
        )
        clean["last_name"] = check(
            "last_name", normalise_name, values.get("last_name"), label=gettext("last name")
        )
        clean["company_name"] = ""
    email = str(values.get("email") or "").strip()
    clean["email"] = check("email", normalise_email, email) if email else ""
    return clean


def _check_address(values: dict[str, Any], check: _Checks) -> dict[str, Any]:
    return {
        "street_name": check(
            "address.street_name",
            normalise_name,
            values.get("street_name"),
            label=gettext("street"),
        ),
        "city": check("address.city", normalise_name, values.get("city"), label=gettext("city")),
        "state": _spaces(values.get("state"), 100),
        "postal_code": _spaces(values.get("postal_code"), 20),
        "country": check("address.country", normalise_country, values.get("country") or ""),
    }


def _check_bank_account(values: dict[str, Any], check: _Checks) -> dict[str, Any]:
    """WIRE: ABA routing number and US account number; SWIFT: BIC, and an IBAN where the
    bank's country uses one."""
    account_type = str(values.get("account_type") or "").strip().upper()
    clean: dict[str, Any] = {
        "account_type": account_type,
        "bank_name": _spaces(values.get("bank_name"), 200),
        "routing_number": "",
        "swift_code": "",
    }
    number = str(values.get("account_number") or "")
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
        clean["account_number"] = _check_swift_account_number(number, clean["swift_code"], check)
    else:
        check.problems.append(("account.account_type", gettext("Choose WIRE or SWIFT.")))
    return clean


def _check_swift_account_number(number: str, swift_code: str, check: _Checks) -> str:
    bank_country = swift_code[4:6] if swift_code else ""
    if bank_country and uses_iban(bank_country):
        iban: str = check("account.account_number", normalise_iban, number, country=bank_country)
        if not iban:
            check.problems[-1] = (
                "account.account_number",
                check.problems[-1][1]
                + " "
                + gettext("Banks in %(country)s use an IBAN as the account number.")
                % {"country": country_name(bank_country)},
            )
        return iban
    compact = re.sub(r"[\s-]", "", number).upper()
    if not re.fullmatch(r"[A-Z0-9]{4,34}", compact):
        check.problems.append(
            (
                "account.account_number",
                gettext("Enter the account number (4 to 34 letters or digits)."),
            )
        )
    return compact


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


# --- create and refresh ----------------------------------------------------------------------


def _apply_answer(recipient: Recipient, record: UpstreamRecipient) -> None:
    recipient.upstream_created_at = record.created_ts
    recipient.upstream_payload = record.model_dump(mode="json")
    recipient.refreshed_at = timezone.now()


RECIPIENT: MirrorKind[Recipient, UpstreamRecipient] = MirrorKind(
    model=Recipient,
    audit="recipient",
    snapshot_fields=SNAPSHOT_FIELDS,
    upstream_id_of=lambda record: record.recipient_id,
    apply_answer=_apply_answer,
    # After no answer: the recipient the upstream may have made anyway (same account number).
    listed=lambda recipient: (
        call_sync(
            upstream(recipient.environment).recipients.list, user_id=recipient.end_user.upstream_id
        ).recipients
    ),
    matches=lambda recipient, r: (
        (r.account or {}).get("account_number") == recipient.account_number
    ),
)


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
            gettext("This end user is not created upstream yet."),
            errors=[("end_user_id", gettext("not created upstream yet"))],
        )
    body = _recipient_body(clean, end_user)
    return mirror_create(
        RECIPIENT,
        environment_id=end_user.environment_id,
        request_key=request_key,
        request={**clean, "end_user_id": end_user.pk},
        defaults={**clean, "end_user": end_user},
        by=by,
        send=lambda recipient: call_sync(upstream(end_user.environment).recipients.create, **body),
        refused_for_good=(400, 404),
        what="the new recipient",
        rename=RENAME,
        created_summary=lambda recipient: (
            f"Registered by {by.email}; payable once a second person approves it"
        ),
    )


def recipient_refresh(*, recipient: Recipient, by: StaffUser | None) -> Recipient:
    """Keep the upstream's current record of the recipient (shown on the detail page)."""
    require(by, roles.DIRECTORY_VIEW)
    if not recipient.is_synced:
        raise ServiceError(
            gettext("This recipient is not created upstream yet."), code="not_synced"
        )
    record = upstream_answer(
        upstream(recipient.environment).recipients.get, recipient.upstream_id, what="the refresh"
    )
    with transaction.atomic():
        recipient = Recipient.objects.select_for_update().get(pk=recipient.pk)
        recipient.upstream_payload = record.model_dump(mode="json")
        recipient.refreshed_at = timezone.now()
        recipient.save(update_fields=["upstream_payload", "refreshed_at", "updated_at"])
    return recipient
