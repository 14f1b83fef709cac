"""Shared pieces of the typed edge: the base model, Decimal money, both timestamp formats, enums."""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict


def _to_decimal(value: Any) -> Any:
    """Money arrives as a string or a JSON number: read both exactly (a float via its repr)."""
    if value is None or isinstance(value, Decimal):
        return value
    if isinstance(value, bool):
        raise ValueError("a boolean is not an amount")
    if isinstance(value, int | float | str):
        try:
            return Decimal(str(value).strip())
        except InvalidOperation as exc:
            raise ValueError(f"not a decimal amount: {value!r}") from exc
    raise ValueError(f"not a decimal amount: {value!r}")


def _to_datetime(value: Any) -> Any:
    """ISO 8601 with `Z` and milliseconds, or PostgreSQL's `2026-05-28 00:52:49.879228+00`."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.strip())
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise ValueError(f"not a timestamp: {value!r}")


Money = Annotated[Decimal, BeforeValidator(_to_decimal)]
Timestamp = Annotated[datetime, BeforeValidator(_to_datetime)]


class UpstreamModel(BaseModel):
    """Base of every response model: unknown fields are kept (never an error), values immutable."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


# Spellings the upstream uses for a member under another name.
_STATUS_ALIASES = {"CANCELED": "CANCELLED"}


class AnyCaseStatus(enum.StrEnum):
    """A status read whatever the casing, spacing or dashes the upstream answered with."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, str):
            normalised = value.strip().upper().replace("-", "_").replace(" ", "_")
            return cls.__members__.get(_STATUS_ALIASES.get(normalised, normalised))
        return None


class PayoutStatus(AnyCaseStatus):
    """One enum for the payout status, whatever casing the upstream answered in."""

    CREATED = "CREATED"
    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    IN_REVIEW = "IN_REVIEW"
    KYT_PENDING = "KYT_PENDING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    RETURNED = "RETURNED"


class QuoteStatus(AnyCaseStatus):
    ACTIVE = "ACTIVE"
    EXPIRED = "EXPIRED"
    USED = "USED"
