"""The one exception family for upstream failures, and the parser of every documented error body."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from staff.errors import FieldProblem

if TYPE_CHECKING:
    from django.forms import BaseForm


class UpstreamError(Exception):
    """
    Any failure of an upstream call. `retryable` says whether the same request may succeed later
    (timeouts, 429, 5xx); `field_errors` map onto form fields; `details` keeps whatever else the
    body carried (e.g. the `valid_*` lists of a quotation validation error).
    """

    retryable: bool = False
    # How many attempts were sent before this failure was raised (the transport sets it).
    attempts: int = 1

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "",
        field_errors: list[FieldProblem] | None = None,
        details: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field_errors = field_errors or []
        self.details = details or {}
        self.retry_after = retry_after

    def __str__(self) -> str:
        parts = [f"HTTP {self.status}" if self.status else "no response"]
        if self.code:
            parts.append(self.code)
        return f"{' '.join(parts)}: {self.message}"

    def form_errors(self) -> dict[str, list[str]]:
        """Field errors keyed by the upstream's field name (e.g. `account.routing_number`)."""
        errors: dict[str, list[str]] = {}
        for item in self.field_errors:
            errors.setdefault(item.field, []).append(item.message)
        return errors

    def add_to_form(self, form: BaseForm) -> None:
        """
        Show this error on a bound form: each field error on the form field of the same name, or
        of its last segment (`account.routing_number` -> `routing_number`,
        `supporting_documents[0].file` -> `file`); anything else, and the message of an error
        without field errors, as a non-field error.
        """
        for item in self.field_errors:
            last = re.sub(r"\[\d+\]", "", item.field).rsplit(".", 1)[-1]
            target = next((name for name in (item.field, last) if name in form.fields), None)
            form.add_error(target, item.message if target else f"{item.field}: {item.message}")
        if not self.field_errors:
            form.add_error(None, self.message)


class PermanentError(UpstreamError):
    """The request itself is wrong (validation, not found, conflict): retrying cannot help."""


class ValidationError(PermanentError):
    """400/409/422: the upstream refused the request's content."""


class NotFoundError(PermanentError):
    """404 (or 403 for another client's object)."""


class AuthenticationError(PermanentError):
    """401/403 that survived one re-authentication: credentials or API key are wrong."""


class TemporaryError(UpstreamError):
    """The upstream could not answer now; the same request may succeed later."""

    retryable = True


class UpstreamTimeout(TemporaryError):
    """No response in time (or the connection dropped). A mutation may have taken effect."""


class RateLimited(TemporaryError):
    """429: the upstream's limits were hit; `retry_after` seconds say when to come back."""


class ServerError(TemporaryError):
    """5xx, including a gateway's HTML error page."""


class BudgetExhausted(UpstreamError):
    """Our own limiter refused: the weekly budget (or the background share) is spent, or no
    rate slot came free in time; or the upstream said its weekly quota is spent (a 429 whose
    Retry-After is longer than anyone would wait). Nothing more is sent upstream."""


class CalledInTransaction(RuntimeError):
    """
    A programming error, not an upstream failure (so no `except UpstreamError` hides it): the
    gateway was called, or an idempotency key asked for, inside `transaction.atomic()`. The key
    and the call log must be committed before the request whatever the caller does next; inside
    a transaction they would roll back with it, and a re-run would send a new key (two upstream
    objects). Call the upstream outside the block: see docs/gateway.md "Transactions".
    """


@dataclass
class _Parsed:
    code: str = ""
    message: str = ""
    field_errors: list[FieldProblem] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


def _parse_body(text: str) -> _Parsed:
    """Reads every documented error shape; anything else becomes a short, safe message."""
    try:
        body = json.loads(text) if text else None
    except ValueError:
        body = None
    if not isinstance(body, dict):
        snippet = " ".join(text.split())[:200] if text else ""
        return _Parsed(message=snippet or "no error body")
    parsed = _Parsed()
    error = body.get("error")
    if isinstance(error, dict):  # {"error": {"code", "message", "details"}}
        parsed.code = str(error.get("code") or "")
        parsed.message = str(error.get("message") or parsed.code)
        details = error.get("details")
        if isinstance(details, dict):
            parsed.details = dict(details)
    elif isinstance(error, str):  # {"error": "...", "valid_*": [...]}
        parsed.message = error
        parsed.details = {k: v for k, v in body.items() if k != "error"}
    else:  # {"code", "message"}, {"message"}, {"code", "message", "errors": [...]}
        parsed.code = str(body.get("code") or "")
        parsed.message = str(body.get("message") or parsed.code or "")
        errors = body.get("errors")
        if isinstance(errors, list):
            for item in errors:
                if isinstance(item, dict):
                    parsed.field_errors.append(
                        FieldProblem(str(item.get("field") or ""), str(item.get("message") or ""))
                    )
        parsed.details = {k: v for k, v in body.items() if k not in ("code", "message", "errors")}
    if not parsed.message:
        parsed.message = "upstream error"
    return parsed


def error_from_response(
    status: int, text: str, *, retry_after: float | None = None
) -> UpstreamError:
    """The typed exception for a non-2xx response."""
    parsed = _parse_body(text)
    kwargs: dict[str, Any] = {
        "status": status,
        "code": parsed.code,
        "field_errors": parsed.field_errors,
        "details": parsed.details,
        "retry_after": retry_after,
    }
    cls: type[UpstreamError]
    if status == 429:
        cls = RateLimited
        kwargs["code"] = parsed.code or "rate_limited"
    elif status >= 500:
        cls = ServerError
    elif status == 401:
        cls = AuthenticationError
    elif status == 403:
        # A bare {"message": "Forbidden"} is an API gateway refusing the key; a coded 403 is an
        # object of another client, which the product treats like "not found".
        cls = NotFoundError if parsed.code else AuthenticationError
    elif status == 404:
        cls = NotFoundError
    elif status in (400, 409, 422):
        cls = ValidationError
    else:
        cls = PermanentError
    return cls(parsed.message, **kwargs)
