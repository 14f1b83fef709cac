"""Every quotation error the upstream answers, mapped onto the field of the request it concerns."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from django.utils.translation import gettext

from gateway.errors import (
    AuthenticationError,
    BudgetExhausted,
    NotFoundError,
    RateLimited,
    TemporaryError,
    UpstreamError,
)
from staff.errors import ServiceError

# The request fields of POST/PATCH /v1/quotations (interface.md 4.2; decisions.md 2).
FIELDS = (
    "base_currency",
    "quote_currency",
    "amount",
    "amount_in_destination",
    "account_type",
    "network",
)

# A valid_* list names the field it is the list of (interface.md 7).
LIST_FIELDS = {
    "valid_quote_currencies": "quote_currency",
    "valid_base_currencies": "base_currency",
    "valid_account_types": "account_type",
    "valid_networks": "network",
}

# Coded errors ({"error": {"code", ...}}): the field each concerns, and why.
CODE_FIELDS: dict[str, str | None] = {
    # "Pair not enabled for the account type": the rail is what the maker can change.
    "CURRENCY_PAIR_NOT_ENABLED": "account_type",
    # Fees deducted from the amount exceed it: a larger amount fixes it.
    "FEES_EXCEED_AMOUNT": "amount",
    # Amount in destination too small to cover the fees.
    "INVALID_CALCULATED_AMOUNT": "amount",
    # The quote itself (unknown, or no longer ACTIVE): not a field of the request.
    "QUOTE_NOT_FOUND": None,
    "QUOTE_INVALID_STATE": None,
}

_FIELD_IN_MESSAGE = re.compile(r"\b(" + "|".join(sorted(FIELDS, key=len, reverse=True)) + r")\b")


@dataclass(frozen=True)
class QuoteFieldError:
    """An upstream refusal on one field (None: the request as a whole), with its valid choices."""

    field: str | None
    message: str
    choices: list[str] = dataclasses.field(default_factory=list)
    code: str = ""

    @property
    def shown(self) -> str:
        """The message as a person reads it: an upstream list of valid values spelt out."""
        if not self.choices:
            return self.message
        return f"{self.message} Valid choices: {', '.join(self.choices)}."


class QuoteRefused(ServiceError):
    """
    A quotation request refused, by us before sending or by the upstream: its refusals by field.

    In the one error shape: code is the refusal's own (`QUOTE_INVALID_STATE`,
    `upstream_unavailable`, ...) or `validation_error`; status 503 when the upstream did not
    answer (nothing was created: send the same request again), 502 when it refused our
    credentials, else 400, FEES_EXCEED_AMOUNT included (the upstream's 409; ADR 0009). Each
    field error names the request field (empty: the request as a whole) with the valid choices
    spelt out. `refusals` keeps them as the quote pages and tests read them.
    """

    def __init__(self, refusals: list[QuoteFieldError]) -> None:
        codes = [item.code for item in refusals if item.code]
        status = 400
        if "upstream_unavailable" in codes:
            status = 503
        elif "upstream_credentials" in codes:
            status = 502
        super().__init__(
            gettext("The quote request was refused."),
            code=codes[0] if codes else "validation_error",
            errors=[(item.field or "", item.shown) for item in refusals],
            status=status,
        )
        self.refusals = refusals


def _field_named_in(message: str) -> str | None:
    found = _FIELD_IN_MESSAGE.search(message)
    return found.group(1) if found else None


def _explain(exc: UpstreamError) -> str:
    details = exc.details
    if exc.code == "CURRENCY_PAIR_NOT_ENABLED":
        return (
            f"{details.get('base_currency', '?')}→{details.get('quote_currency', '?')} is not "
            f"enabled on the {details.get('account_type', '?')} rail."
        )
    if exc.code == "FEES_EXCEED_AMOUNT":
        return gettext("Fees of %(value)s exceed the amount of %(value2)s: raise the amount.") % {
            "value": details.get("total_fees", "?"),
            "value2": details.get("amount", "?"),
        }
    if exc.code == "INVALID_CALCULATED_AMOUNT":
        return (
            f"{details.get('requested_amount', '?')} is too small to cover the fees "
            f"(it would need a source amount of {details.get('calculated_base_amount', '?')})."
        )
    if exc.code == "QUOTE_NOT_FOUND":
        return gettext("The upstream does not know this quote.")
    if exc.code == "QUOTE_INVALID_STATE":
        return gettext("The quote is no longer active: request a new one.")
    return exc.message


def quote_errors(exc: UpstreamError) -> list[QuoteFieldError]:
    """The field errors of one failed quotation call (create, get or amount update)."""
    if isinstance(exc, RateLimited | BudgetExhausted):
        return [
            QuoteFieldError(
                None, gettext("The upstream's request limit is reached: try again shortly.")
            )
        ]
    if isinstance(exc, TemporaryError):
        return [
            QuoteFieldError(
                None,
                gettext("The upstream did not answer in time: try again."),
                code="upstream_unavailable",
            )
        ]
    if isinstance(exc, AuthenticationError):
        return [
            QuoteFieldError(
                None,
                gettext(
                    "The environment's credentials were refused by the upstream (%(message)s); "
                    "an admin must check them."
                )
                % {"message": exc.message},
                code="upstream_credentials",
            )
        ]
    if exc.code:
        target = CODE_FIELDS.get(exc.code, _field_named_in(exc.message))
        return [QuoteFieldError(target, _explain(exc), code=exc.code)]
    if isinstance(exc, NotFoundError):
        return [QuoteFieldError(None, gettext("The upstream does not know this quote."))]
    errors: list[QuoteFieldError] = []
    for list_name, list_field in LIST_FIELDS.items():
        values = exc.details.get(list_name)
        if not isinstance(values, list):
            continue
        # A validation message names its field ("amount is required"); the list is only the
        # field's own when the message does not name another one.
        named = _field_named_in(exc.message)
        target = named or list_field
        choices = [str(v) for v in values] if target == list_field else []
        errors.append(QuoteFieldError(target, exc.message, choices))
    if not errors:
        errors.append(QuoteFieldError(_field_named_in(exc.message), exc.message))
    return errors
