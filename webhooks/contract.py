"""The event contract in one table: each type's fields, status values, record kind and linked ids.

Sources: interface.md 6.3-6.4 (user.*, card_payment, barcode_generated) and decisions.md 4
(virtual_account.*, payout.*). Each type names the kind of record it applies to; the app that
owns that kind registers its apply service (`webhooks.handlers`), so an event no app applies yet
is kept as "no handler yet" and retried instead of breaking the receiver or being lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# The kinds of record events apply to; each owning app registers its apply service for its kind.
USER = "user"
VIRTUAL_ACCOUNT = "virtual_account"
PAYOUT = "payout"
# Payment-link events have no owning app: webhooks records them and links the objects they name.
PAYMENT_LINK = "payment_link"

USER_STATUSES = frozenset({"unverified", "verified"})
USER_VERIFICATION_STATUSES = frozenset({"not_started", "verified", "rejected"})
VIRTUAL_ACCOUNT_STATUSES = frozenset({"activating", "active", "failed", "frozen", "deactivated"})
# decisions.md 3: upper case from GET and events, lower case `created` from initiation.
PAYOUT_STATUSES = frozenset(
    {
        "CREATED",
        "PENDING",
        "PROCESSING",
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "IN_REVIEW",
        "KYT_PENDING",
    }
)


@dataclass(frozen=True)
class EventKind:
    """One event type: the kind of record it applies to and what its `data` may hold."""

    applies_to: str
    fields: frozenset[str]
    # Field path (dots for nesting) -> the values the contract lists for it.
    statuses: dict[str, frozenset[str]] = field(default_factory=dict)
    # Field path -> the kind of object it names (for links and per-object live groups).
    ids: dict[str, str] = field(default_factory=dict)
    case_insensitive_statuses: bool = False


_USER_COMMON = {"event_id", "user_id", "type", "email", "phone", "status", "verification_status"}
_USER_STATUS_MAP = {
    "status": USER_STATUSES,
    "verification_status": USER_VERIFICATION_STATUSES,
}
_PAYOUT_FIELDS = frozenset(
    {
        "event_id",
        "payout_id",
        "virtual_account_id",
        "status",
        "amount",
        "currency",
        "created_at",
        "reason",
    }
)
_PAYOUT_IDS = {"payout_id": "payout", "virtual_account_id": "virtual_account"}


def _payout_kind() -> EventKind:
    return EventKind(
        PAYOUT,
        _PAYOUT_FIELDS,
        {"status": PAYOUT_STATUSES},
        _PAYOUT_IDS,
        case_insensitive_statuses=True,
    )


EVENT_KINDS: dict[str, EventKind] = {
    "user.created": EventKind(
        USER,
        frozenset(_USER_COMMON | {"verification_mode", "created_at", "verification_triggered"}),
        _USER_STATUS_MAP,
        {"user_id": "user"},
    ),
    "user.updated": EventKind(
        USER,
        frozenset(
            _USER_COMMON
            | {
                "updated_at",
                "updated_fields",
                "requires_reverification",
                "verification_triggered",
            }
        ),
        _USER_STATUS_MAP,
        {"user_id": "user"},
    ),
    "user.verification.accepted": EventKind(
        USER,
        frozenset({"event_id", "user_id", "id", "verification_status", "kyc_type"}),
        {"verification_status": USER_VERIFICATION_STATUSES},
        {"user_id": "user"},
    ),
    "user.verification.failed": EventKind(
        USER,
        frozenset({"event_id", "user_id", "id", "verification_status", "reasons"}),
        {"verification_status": USER_VERIFICATION_STATUSES},
        {"user_id": "user"},
    ),
    "virtual_account.created": EventKind(
        VIRTUAL_ACCOUNT,
        frozenset({"event_id", "virtual_account_id", "user_id", "status"}),
        {"status": VIRTUAL_ACCOUNT_STATUSES},
        {"virtual_account_id": "virtual_account", "user_id": "user"},
    ),
    "virtual_account.activated": EventKind(
        VIRTUAL_ACCOUNT,
        frozenset(
            {
                "event_id",
                "virtual_account_id",
                "user_id",
                "status",
                "account_number",
                "routing_number",
            }
        ),
        {"status": VIRTUAL_ACCOUNT_STATUSES},
        {"virtual_account_id": "virtual_account", "user_id": "user"},
    ),
    "virtual_account.deposit_funds_received": EventKind(
        VIRTUAL_ACCOUNT,
        frozenset(
            {
                "event_id",
                "virtual_account_id",
                "deposit_id",
                "amount",
                "currency",
                "source",
                "created_at",
            }
        ),
        {},
        {"virtual_account_id": "virtual_account"},
    ),
    "payout.created": _payout_kind(),
    "payout.completed": _payout_kind(),
    "payout.failed": _payout_kind(),
    "payout.returned": _payout_kind(),
    "payout.deposit_received": _payout_kind(),
    "payout.status_changed": EventKind(
        PAYOUT,
        frozenset(
            {"event_id", "event_type", "created_at", "data", "data.payout_id", "data.status"}
            | {"data.previous_status"}
        ),
        {"data.status": PAYOUT_STATUSES, "data.previous_status": PAYOUT_STATUSES},
        {"data.payout_id": "payout"},
        case_insensitive_statuses=True,
    ),
    "card_payment": EventKind(
        PAYMENT_LINK,
        frozenset({"event_id", "payment_link_id", "client_uuid", "reference", "status"}),
        {"status": frozenset({"completed"})},
        {"payment_link_id": "payment_link"},
    ),
    "barcode_generated": EventKind(
        PAYMENT_LINK,
        frozenset(
            {
                "event_id",
                "user_id",
                "recipient_id",
                "base_amount",
                "base_currency",
                "quote_currency",
                "cash_request_id",
                "cash_request_status",
                "client_uuid",
                "payment_link_id",
                "referenceid",
                "metadata",
                "metadata.quote_id",
                "metadata.quote_amount",
                "metadata.fixed_fee",
                "metadata.rate",
            }
        ),
        {"cash_request_status": frozenset({"DEPOSITED"})},
        {
            "user_id": "user",
            "recipient_id": "recipient",
            "payment_link_id": "payment_link",
            "cash_request_id": "cash_request",
            "metadata.quote_id": "quote",
        },
    ),
}

# Objects with a live group per object (pages of a user, a virtual account, a payout subscribe).
LIVE_OBJECT_KINDS = ("user", "virtual_account", "payout")
_ID_SHAPE = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


def lookup(data: dict[str, Any], path: str) -> Any:
    value: Any = data
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def named_objects(event_type: str, data: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, upstream id) for every object the event names, from its contract entry."""
    kind = EVENT_KINDS.get(event_type)
    if kind is None:
        return []
    found = []
    for path, object_kind in kind.ids.items():
        value = lookup(data, path)
        if isinstance(value, str) and _ID_SHAPE.match(value):
            found.append((object_kind, value))
    return found


def upstream_ids(data: Any) -> list[str]:
    """Every id-looking string in the payload (uuids, evt_/ver_ ids), for search by any id."""
    found: list[str] = []

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for child_key, child in value.items():
                walk(child, str(child_key))
        elif isinstance(value, list):
            for child in value:
                walk(child, key)
        elif (
            isinstance(value, str)
            and (key == "id" or key.endswith("_id") or key == "referenceid")
            and _ID_SHAPE.match(value)
            and value not in found
        ):
            found.append(value)

    walk(data)
    return found


def _paths(data: dict[str, Any], prefix: str = "") -> list[str]:
    paths = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        paths.append(path)
        if isinstance(value, dict) and prefix == "":
            paths.extend(_paths(value, f"{path}."))
    return paths


def contract_drift(event_type: str, data: dict[str, Any]) -> list[dict[str, str]]:
    """What in this event the contract does not list: flagged on the event, never rejected."""
    kind = EVENT_KINDS.get(event_type)
    if kind is None:
        return [{"kind": "unknown_event_type", "detail": event_type}]
    drift: list[dict[str, str]] = []
    for path in _paths(data):
        top = path.split(".")[0]
        nested_listed = any(f.startswith(f"{top}.") for f in kind.fields)
        if "." in path and not nested_listed:
            continue  # an object the contract describes only as a whole (e.g. `source`)
        if path not in kind.fields:
            drift.append({"kind": "unexpected_field", "detail": path})
    for path, allowed in kind.statuses.items():
        value = lookup(data, path)
        if value is None:
            continue
        text = str(value)
        if kind.case_insensitive_statuses:
            text = text.upper()
        if text not in allowed:
            drift.append({"kind": "unknown_status", "detail": f"{path}={value}"})
    return drift
