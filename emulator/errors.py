"""Errors of the emulator in the upstream's three body shapes, rendered on every NinjaAPI."""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError

Family = Literal["resource", "quote", "auth"]

# Which error shape ninja's own request-validation errors take, by path prefix (after any
# /sandbox prefix). The first matching prefix wins; anything else is the "resource" family.
# Append (prefix, family) pairs here if a router needs a family other than "resource".
ERROR_FAMILIES: list[tuple[str, Family]] = [
    ("/v1/quotations", "quote"),
    ("/auth", "auth"),
]


class EmulatorError(Exception):
    """An error answer: HTTP status, JSON body and extra headers."""

    def __init__(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(f"{status} {body}")
        self.status = status
        self.body = body
        self.headers: dict[str, str] = dict(headers or {})

    def response(self) -> JsonResponse:
        response = JsonResponse(self.body, status=self.status)
        for name, value in self.headers.items():
            response[name] = value
        return response


def resource_error(
    status: int, code: str, message: str, errors: list[tuple[str, str]] | None = None
) -> EmulatorError:
    """Payouts, users, accounts, recipients: `{"code", "message", "errors": [{field, message}]}`."""
    items = [{"field": field, "message": text} for field, text in (errors or [])]
    return EmulatorError(status, {"code": code, "message": message, "errors": items})


def quote_validation_error(message: str, **extra_lists: list[str]) -> EmulatorError:
    """Quotation validation: `{"error": message, "valid_...": [...]}` (400)."""
    body: dict[str, Any] = {"error": message}
    body.update(extra_lists)
    return EmulatorError(400, body)


def quote_error(
    status: int, code: str, message: str, details: dict[str, Any] | None = None
) -> EmulatorError:
    """Quotation business errors: `{"error": {"code", "message", "details"?}}`."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return EmulatorError(status, {"error": error})


def auth_error(message: str) -> EmulatorError:
    return EmulatorError(401, {"code": "unauthorized", "message": message})


def token_expired() -> EmulatorError:
    return EmulatorError(401, {"message": "token has expired"})


def rate_limited(message: str, headers: dict[str, str]) -> EmulatorError:
    return EmulatorError(429, {"code": "rate_limited", "message": message}, headers)


def family_for_path(path: str) -> Family:
    if path.startswith("/sandbox/"):
        path = path[len("/sandbox") :]
    for prefix, family in ERROR_FAMILIES:
        if path.startswith(prefix):
            return family
    return "resource"


def _field_of(loc: tuple[Any, ...] | list[Any]) -> str:
    # ninja prefixes the location with "body"/"query"/"path" and the parameter name; keep the rest.
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header", "payload")]
    return ".".join(parts) or "body"


def _message_of(error: dict[str, Any]) -> str:
    field = _field_of(error.get("loc", ()))
    if error.get("type") == "missing":
        return f"{field} is required"
    return f"{field}: {error.get('msg', 'invalid value')}"


def validation_error_for(request: HttpRequest, errors: list[dict[str, Any]]) -> EmulatorError:
    """ninja's request-validation errors rendered in the shape of the endpoint's family."""
    family = family_for_path(request.path)
    messages = [_message_of(e) for e in errors] or ["invalid request body"]
    if family == "quote":
        from emulator.domain.corridors import QUOTE_CURRENCIES

        return quote_validation_error(messages[0], valid_quote_currencies=list(QUOTE_CURRENCIES))
    if family == "auth":
        return EmulatorError(400, {"code": "validation_error", "message": messages[0]})
    pairs = [(_field_of(e.get("loc", ())), _message_of(e)) for e in errors]
    return resource_error(400, "validation_error", messages[0], errors=pairs)


def install_handlers(api: NinjaAPI) -> None:
    """Every emulator API renders EmulatorError and ninja's own errors in the upstream's shapes."""

    def on_emulator_error(request: HttpRequest, exc: Any) -> HttpResponse:
        response: HttpResponse = exc.response()
        return response

    def on_validation(request: HttpRequest, exc: Any) -> HttpResponse:
        return validation_error_for(request, list(exc.errors)).response()

    def on_auth(request: HttpRequest, exc: Any) -> HttpResponse:
        return auth_error("no authorization token provided").response()

    def on_http_error(request: HttpRequest, exc: Any) -> HttpResponse:
        status = int(exc.status_code)
        code = "not_found" if status == 404 else "error"
        return EmulatorError(status, {"code": code, "message": str(exc)}).response()

    api.add_exception_handler(EmulatorError, on_emulator_error)
    api.add_exception_handler(NinjaValidationError, on_validation)
    api.add_exception_handler(AuthenticationError, on_auth)
    api.add_exception_handler(HttpError, on_http_error)
