"""Recipients: the payees' bank accounts; payouts accept only WIRE and SWIFT ones."""

from __future__ import annotations

import re
from typing import Any

import pycountry
from django.db import transaction

from emulator import clock
from emulator.database import EMULATOR_DB
from emulator.domain.formats import EMAIL_RE, FieldErrors, iso, optional_str
from emulator.domain.lookup import owned_or_404
from emulator.domain.users import user_get
from emulator.models import ApiClient, Recipient

# Account types and the currency each pays out in; payouts need WIRE or SWIFT (interface.md 4.4).
ACCOUNT_CURRENCIES = {
    "WIRE": "USD",
    "SWIFT": "USD",
    "ACH": "USD",
    "SPEI": "MXN",
    "PSE": "COP",
    "WALLET": "USDC",
}
PAYOUT_ACCOUNT_TYPES = ("WIRE", "SWIFT")
ROUTING_RE = re.compile(r"^\d{9}$")
SWIFT_RE = re.compile(r"^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$")
ADDRESS_FIELDS = ("street_name", "city", "state", "postal_code", "country")
# decisions.md, Recipients row: the address fields a recipient cannot do without.
REQUIRED_ADDRESS_FIELDS = ("street_name", "city", "country")
COUNTRY_RE = re.compile(r"^[A-Z]{2}$")


def _address_errors(address: dict[str, Any], errors: FieldErrors) -> None:
    for name in address:
        if name not in ADDRESS_FIELDS:
            errors.add(f"address.{name}", "is not a known field")
        elif not isinstance(address[name], str):
            errors.add(f"address.{name}", "must be a string")
    for name in REQUIRED_ADDRESS_FIELDS:
        if not (isinstance(address.get(name), str) and address[name].strip()):
            errors.add(f"address.{name}", "is required")
    country = address.get("country")
    if isinstance(country, str) and country and not is_country_code(country):
        errors.add("address.country", "must be an ISO 3166 alpha-2 country code, e.g. US")


def is_country_code(value: str) -> bool:
    """An assigned ISO 3166-1 alpha-2 code, in capitals as the upstream writes them."""
    return bool(COUNTRY_RE.match(value)) and pycountry.countries.get(alpha_2=value) is not None


def recipient_payload(recipient: Recipient) -> dict[str, Any]:
    account: dict[str, Any] = {
        "account_type": recipient.account_type,
        "account_number": recipient.account_number,
        "bank_name": recipient.bank_name,
    }
    if recipient.routing_number:
        account["routing_number"] = recipient.routing_number
    if recipient.swift_code:
        account["swift_code"] = recipient.swift_code
    return {
        "recipient_id": str(recipient.recipient_id),
        "user_id": str(recipient.user_id),
        "first_name": recipient.first_name or None,
        "last_name": recipient.last_name or None,
        "company_name": recipient.company_name or None,
        "email": recipient.email or None,
        "address": recipient.address,
        "account": account,
        "currency": recipient.currency,
        "created_ts": iso(recipient.created_at),
    }


def recipient_get(*, client: ApiClient, environment: str, recipient_id: Any) -> Recipient:
    return owned_or_404(
        Recipient,
        id_field="recipient_id",
        raw_id=recipient_id,
        client=client,
        environment=environment,
        code="RECIPIENT_NOT_FOUND",
        message="Recipient not found",
        error_field="recipient_id",
    )


def recipient_create(*, client: ApiClient, environment: str, body: dict[str, Any]) -> Recipient:
    fields = _recipient_fields(body)
    user = user_get(client=client, environment=environment, user_id=body["user_id"])
    with transaction.atomic(using=EMULATOR_DB):
        return Recipient.objects.create(
            client=client, environment=environment, user=user, created_at=clock.now(), **fields
        )


def _recipient_fields(body: dict[str, Any]) -> dict[str, Any]:
    """The recipient's fields from a checked body (all its errors at once, 400)."""
    errors = FieldErrors()
    first_name = optional_str(body, "first_name", errors, 100)
    last_name = optional_str(body, "last_name", errors, 100)
    company_name = optional_str(body, "company_name", errors, 200)
    email = optional_str(body, "email", errors, 254)
    if not company_name and not (first_name and last_name):
        errors.add("first_name", "first_name and last_name, or company_name, are required")
    if email and not EMAIL_RE.match(email):
        errors.add("email", "must be a valid e-mail address")
    if not isinstance(body.get("user_id"), str) or not body.get("user_id"):
        errors.add("user_id", "is required")
    address = body.get("address") or {}
    if not isinstance(address, dict):
        errors.add("address", "must be an object")
        address = {}
    _address_errors(address, errors)
    account = _account_fields(body.get("account"), errors)
    errors.raise_if_any()
    return {
        "first_name": first_name,
        "last_name": last_name,
        "company_name": company_name,
        "email": email,
        "address": {name: address[name] for name in ADDRESS_FIELDS if name in address},
        **account,
    }


def _account_fields(account: Any, errors: FieldErrors) -> dict[str, Any]:
    """The bank account's fields, checked for its rail (WIRE routing number, SWIFT code)."""
    if not isinstance(account, dict):
        errors.add("account", "is required")
        account = {}
    account_type = account.get("account_type")
    if account_type not in ACCOUNT_CURRENCIES:
        errors.add("account.account_type", f"must be one of {', '.join(ACCOUNT_CURRENCIES)}")
    account_number = optional_str(account, "account_number", errors, 64)
    if not account_number:
        errors.add("account.account_number", "is required")
    routing_number = optional_str(account, "routing_number", errors, 32)
    swift_code = optional_str(account, "swift_code", errors, 16).upper()
    bank_name = optional_str(account, "bank_name", errors, 200)
    if account_type == "WIRE" and not ROUTING_RE.match(routing_number):
        errors.add("account.routing_number", "WIRE needs a 9-digit routing_number")
    if account_type == "SWIFT" and not SWIFT_RE.match(swift_code):
        errors.add("account.swift_code", "SWIFT needs an 8 or 11 character swift_code")
    return {
        "account_type": str(account_type),
        "account_number": account_number,
        "routing_number": routing_number,
        "swift_code": swift_code,
        "bank_name": bank_name,
        "currency": ACCOUNT_CURRENCIES.get(str(account_type), ""),
    }
