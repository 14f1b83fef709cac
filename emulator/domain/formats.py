"""The emulator's one formats module: timestamps, money strings, JSON bodies and their checks."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from django.http import HttpRequest

from emulator.errors import EmulatorError, resource_error

CENTS = Decimal("0.01")
PAYOUT_AMOUNT_RE = re.compile(r"^\d+(\.\d{1,2})?$")
MAX_PAYOUT_AMOUNT = Decimal("999999.99")


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 UTC with milliseconds and Z, as the upstream writes its timestamps."""
    if moment is None:
        return None
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_uuid(value: Any) -> uuid.UUID | None:
    """`value` as a UUID, or None when it is not one (a lookup by it then finds nothing)."""
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def money(value: Decimal) -> str:
    """A money amount as the upstream's string: half-up to the cent."""
    return str(Decimal(value).quantize(CENTS, rounding=ROUND_HALF_UP))


class FieldErrors:
    """Collects field problems of one request body and raises them as one 400."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, field: str, message: str) -> None:
        self.items.append((field, message))

    def raise_if_any(self) -> None:
        if self.items:
            raise validation_error(self.items)


def validation_error(errors: list[tuple[str, str]]) -> EmulatorError:
    return resource_error(400, "validation_error", "Request validation failed", errors=errors)


def json_body(request: HttpRequest) -> dict[str, Any]:
    """The request's JSON object; anything else is a 400 in the resource error shape."""
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise validation_error([("body", "must be a JSON object")]) from None
    if not isinstance(body, dict):
        raise validation_error([("body", "must be a JSON object")])
    return body


def parse_decimal(value: Any) -> Decimal | None:
    """A JSON number or numeric string as a Decimal; None when it is neither."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        result = Decimal(str(value))
    except InvalidOperation:
        return None
    return result if result.is_finite() else None


def parse_payout_amount(value: Any, errors: FieldErrors, field: str = "amount") -> Decimal | None:
    """Payout amounts: a string of up to 2 decimals, above 0 and at most 999999.99."""
    if value is None:
        errors.add(field, "is required")
        return None
    if not isinstance(value, str) or not PAYOUT_AMOUNT_RE.match(value):
        errors.add(field, 'must be a string with at most 2 decimals, e.g. "100.00"')
        return None
    amount = Decimal(value)
    if amount <= 0:
        errors.add(field, "must be greater than 0")
        return None
    if amount > MAX_PAYOUT_AMOUNT:
        errors.add(field, "must be at most 999999.99")
        return None
    return amount.quantize(CENTS)


def optional_str(body: dict[str, Any], field: str, errors: FieldErrors, max_length: int) -> str:
    value = body.get(field)
    if value is None:
        return ""
    if not isinstance(value, str):
        errors.add(field, "must be a string")
        return ""
    if len(value) > max_length:
        errors.add(field, f"must be at most {max_length} characters")
        return ""
    return value.strip()


EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class BodyError(ValueError):
    """The body is not JSON (for /auth and quotations, which answer it in their own shapes)."""


def raw_json_body(request: HttpRequest) -> Any:
    """The parsed body, numbers with a fraction as Decimal (money never goes through float)."""
    if not request.body:
        return None
    try:
        return json.loads(request.body, parse_float=Decimal)
    except ValueError as exc:
        raise BodyError("request body is not valid JSON") from exc
