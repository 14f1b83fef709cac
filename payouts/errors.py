"""Why a payout request or action was refused: `staff.errors.ServiceError`s, rendered once.

The API answers every one of them in the one error shape with its `status` (config/api.py);
pages put them on the form at fault (`add_to_form`) or in words (`refusal_texts`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext

from staff.errors import ServiceError

if TYPE_CHECKING:
    from payouts.models import Payout

# A state the request conflicts with (409); any other invalid draft is bad input (400).
CONFLICT_CODES = (
    "duplicate_needs_confirmation",
    "not_a_draft",
    "limit_exceeded",
    "recipient_not_approved",
)
UNANSWERED = "upstream_unavailable"


class PayoutRefusal(ServiceError):
    """What payout pages show of a refusal: each message on its form field when the form has
    it, else on the form as a whole, in the service's own words (no field name prefixed)."""

    names_fields_off_the_form = False

    def texts(self, *, named: bool = False) -> list[str]:
        """Every message in order; `named` prefixes each field's name ("amount: ...")."""
        if not self.errors:
            return [self.message]
        return [f"{e.field}: {e.message}" if named and e.field else e.message for e in self.errors]


def refusal_texts(exc: Exception, *, named: bool = False) -> list[str]:
    """A refusal in words, for a page: the service's messages, or the permission's reason."""
    if isinstance(exc, PayoutRefusal):
        return exc.texts(named=named)
    if isinstance(exc, ServiceError):
        return [exc.message]
    return [str(exc) or gettext("Not allowed.")]


def refusal_text(exc: Exception) -> str:
    return " ".join(refusal_texts(exc))


# What a payout page catches and shows (anything else, a 404 or a crash, is not a refusal).
REFUSALS = (ServiceError, PermissionDenied)


class PayoutInvalid(PayoutRefusal):
    """
    A draft the rules refuse: messages by field ("" for the payout as a whole), kept in
    `by_field`. 409 for a state conflict, 503 when the upstream did not answer (nothing
    changed; the message says so and no field is at fault), 400 otherwise.
    """

    def __init__(self, errors: dict[str, list[str]], code: str = "validation_error") -> None:
        self.by_field = errors
        if code == UNANSWERED:
            message = " ".join(errors.get("", [])) or gettext("The upstream did not answer.")
            super().__init__(message, code=code, status=503)
            return
        super().__init__(
            gettext("The payout request was refused."),
            code=code,
            errors=[(name, text) for name, texts in errors.items() for text in texts],
            status=409 if code in CONFLICT_CODES else 400,
        )

    def texts(self, *, named: bool = False) -> list[str]:
        return [
            f"{name}: {text}" if named and name else text
            for name, texts in self.by_field.items()
            for text in texts
        ]


class DuplicateNeedsConfirmation(PayoutInvalid):
    """An identical payout (account, recipient, amount) is already on its way."""

    def __init__(self, duplicates: list[Payout]) -> None:
        ids = ", ".join(f"#{p.pk}" for p in duplicates)
        super().__init__(
            {
                "": [
                    gettext(
                        "An identical payout (same account, recipient and amount) is pending: "
                        "%(ids)s. Confirm to submit another one."
                    )
                    % {"ids": ids}
                ]
            },
            code="duplicate_needs_confirmation",
        )
        self.duplicates = duplicates


class PayoutActionRefused(PayoutRefusal):
    """
    A staff action the rules do not allow now (state, segregation of duties, OTP). `code` is
    stable for API clients, `field` names the input at fault when there is one, and `status` is
    the HTTP status the API answers with (409 for a state conflict, 400 for bad input, 403 for a
    rule about the person).
    """

    def __init__(self, code: str, message: str, *, field: str = "", status: int = 409) -> None:
        super().__init__(
            message, code=code, errors=[(field, message)] if field else [], status=status
        )
        self.field = field
