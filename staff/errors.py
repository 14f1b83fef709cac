"""The errors services raise for bad input or refused actions, in the API's one error shape."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.forms import BaseForm


@dataclass(frozen=True)
class FieldProblem:
    field: str
    message: str


class ServiceError(Exception):
    """
    A request a service refused: `{"code", "message", "errors": [{"field", "message"}]}` with
    `status` in the API; on a page each field error goes to the form field of the same name.
    Field names are the API's (dotted for nested bodies: `account.routing_number`).
    """

    status = 400
    # An error on a field the form does not have goes above the form, prefixed with the field's
    # name; a family whose messages already say what they concern turns the prefix off.
    names_fields_off_the_form = True

    def __init__(
        self,
        message: str,
        *,
        code: str = "validation_error",
        errors: Iterable[FieldProblem | tuple[str, str]] = (),
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.errors = [e if isinstance(e, FieldProblem) else FieldProblem(*e) for e in errors]
        if status is not None:
            self.status = status

    def as_body(self) -> dict[str, object]:
        return {
            "code": self.code,
            "message": self.message,
            "errors": [{"field": e.field, "message": e.message} for e in self.errors],
        }

    def as_message(self) -> str:
        """One line for a page without a form (or a command): the message, then each field error."""
        details = "; ".join(
            f"{item.field}: {item.message}" if item.field else item.message for item in self.errors
        )
        return self.message + (f" ({details})" if details else "")

    def add_to_form(self, form: BaseForm, *, rename: Mapping[str, str] | None = None) -> None:
        """
        Each error on its form field (by full name, `rename`d name, or last dotted segment); one
        on no field of the form goes above it, named unless it concerns the request as a whole.
        """
        rename = rename or {}
        for item in self.errors:
            last = re.sub(r"\[\d+\]", "", item.field).rsplit(".", 1)[-1]
            candidates = (rename.get(item.field), item.field, rename.get(last), last)
            target = next((n for n in candidates if n and n in form.fields), None)
            if target is not None and target in form.errors and item.message in form.errors[target]:
                continue
            # An empty field is the request as a whole.
            named = target or not item.field or not self.names_fields_off_the_form
            form.add_error(target, item.message if named else f"{item.field}: {item.message}")
        if not self.errors:
            form.add_error(None, self.message)


class UpstreamUnavailable(ServiceError):
    """The upstream did not answer (timeout, 5xx, 429, our budget): try again later."""

    status = 503
