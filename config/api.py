"""The back office's NinjaAPI at /api/v1; each app adds its Router here. Docs are staff-only.

Authentication: a personal API token (`Authorization: Bearer <token>`, see staff.api_tokens)
acts as its staff member with exactly their permissions; the browser's session works too (the
docs page). Every error, whatever raised it, answers the one shape of `gateway.api_support.ErrorOut`
`{"code", "message", "errors": [{"field", "message"}]}`:

- bad input is **400** `validation_error` (schema errors from ninja, service rules and the
  upstream's own field errors alike: a caller handles one status for "fix your request"; the
  upstream answers 400 for these too, decisions.md 1 "Error shapes");
- 401 `unauthorized` (no or bad credentials), 403 `permission_denied`, 404 `not_found`;
- 409 for conflicts a service names; 503 `upstream_unavailable` when the upstream did not answer
  (nothing is half-created: retry the same request).
"""

import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer, django_auth

from accounts.api import router as accounts_router
from gateway.api_support import ERROR_RESPONSES
from payouts.approval.api import router as approval_router
from payouts.drafts.api import router as payouts_router
from payouts.release.api import router as release_router
from quotes.api import router as quotes_router
from staff.api_tokens import api_token_authenticate
from staff.errors import ServiceError
from staff.roles import has_staff_role, user_roles
from users.api import router as users_router
from webhooks.api import router as webhooks_router

logger = logging.getLogger(__name__)


def staff_docs_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The OpenAPI page and schema: anonymous users go to the login page, role-less ones get 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not has_staff_role(request.user):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapper


class StaffTokenAuth(HttpBearer):
    """`Authorization: Bearer <personal API token>`: the request acts as the token's owner."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        user = api_token_authenticate(token.strip())
        if user is None or not has_staff_role(user):
            return None
        request.user = user
        return user


api = NinjaAPI(
    title="PayOps API",
    version="1",
    description=(
        "The PayOps back office over HTTP. Authenticate with a personal API token "
        "(`Authorization: Bearer <token>`, created on your profile page or with "
        "`manage.py api_token create`). Paths take PayOps ids; every object also shows its "
        "`upstream_id`. `?environment=NAME` selects another environment than your current one. "
        'Every error is `{"code", "message", "errors": [{"field", "message"}]}`; bad input is 400.'
    ),
    urls_namespace="api",
    auth=[StaffTokenAuth(), django_auth],
    docs_decorator=staff_docs_only,
)


def _error(
    request: HttpRequest,
    status: int,
    code: str,
    message: str,
    errors: list[dict[str, str]] | None = None,
) -> HttpResponse:
    body = {"code": code, "message": message, "errors": errors or []}
    return api.create_response(request, body, status=status)


def _field_of(loc: list[Any] | tuple[Any, ...]) -> str:
    """ninja's `["body", "payload", "address", "country"]` -> `address.country`."""
    parts = [str(part) for part in loc]
    if parts and parts[0] in {"body", "query", "path", "header", "cookie", "form"}:
        parts = parts[1:]
        # The body's own parameter name (`payload`) is not a field the caller sent.
        if loc and loc[0] == "body" and len(parts) > 1:
            parts = parts[1:]
    return ".".join(parts) or "body"


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = [
        {"field": _field_of(item.get("loc", ())), "message": str(item.get("msg", "is invalid"))}
        for item in exc.errors
    ]
    return _error(request, 400, "validation_error", "The request has invalid fields.", errors)


@api.exception_handler(ServiceError)
def on_service_error(request: HttpRequest, exc: ServiceError) -> HttpResponse:
    return api.create_response(request, exc.as_body(), status=exc.status)


@api.exception_handler(PermissionDenied)
def on_permission_denied(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    message = str(exc) or "You do not have permission to do this."
    return _error(request, 403, "permission_denied", message)


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _error(request, 404, "not_found", str(exc) or "Not found.")


@api.exception_handler(AuthenticationError)
def on_unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _error(
        request, 401, "unauthorized", "Send a valid personal API token: Authorization: Bearer …"
    )


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return _error(request, exc.status_code, f"http_{exc.status_code}", str(exc))


@api.exception_handler(Exception)
def on_unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    """Still the one shape; the traceback goes to the log, never to the caller."""
    logger.exception("unhandled API error on %s %s", request.method, request.path)
    return _error(request, 500, "server_error", "Something went wrong on our side.")


class MeOut(Schema):
    email: str
    full_name: str
    roles: list[str]


@api.get("/me", response={200: MeOut, **ERROR_RESPONSES}, tags=["staff"])
def me(request: HttpRequest) -> MeOut:
    """The logged-in staff member and their roles."""
    user = request.user
    return MeOut(
        email=user.email,  # type: ignore[union-attr]
        full_name=user.full_name,  # type: ignore[union-attr]
        roles=[role.key for role in user_roles(user)],
    )


# Each app's Router (their shared pieces live in gateway.api_support, so nothing here is a cycle).
api.add_router("", users_router)
api.add_router("", accounts_router)
api.add_router("", quotes_router)
api.add_router("", payouts_router)
api.add_router("", approval_router)
api.add_router("", release_router)
api.add_router("/webhooks", webhooks_router)
