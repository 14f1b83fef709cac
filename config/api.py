"""The back office's NinjaAPI at /api/v1; each app adds its Router here. Docs are staff-only.

Authentication: a personal API token (`Authorization: Bearer <token>`, see staff.api_tokens)
acts as its staff member, narrowed to the token's scopes (StaffUser.has_perm reads the Proof the
auth attaches) until it expires; the browser's session works too (the docs page).

Permission before body: every operation states its permission once, beside itself
(`console.api_permissions.needs`), and the auth step given to it here checks it before ninja
parses anything: a caller without it gets 403 whatever they sent (the services check again; they
are not the only callers).

Every error, whatever raised it, answers the one shape of `gateway.api_support.ErrorOut`
`{"code", "message", "errors": [{"field", "message"}]}`:

- bad input is **400** `validation_error` (schema errors from ninja, service rules and the
  upstream's own field errors alike: a caller handles one status for "fix your request"; the
  upstream answers 400 for these too, decisions.md 1 "Error shapes");
- 401 `unauthorized` (no or bad credentials), 403 `permission_denied`, 404 `not_found`;
- 413 `payload_too_large` for a body over DATA_UPLOAD_MAX_MEMORY_SIZE (read before parsing);
- 409 for conflicts a service names; 503 `upstream_unavailable` when the upstream did not answer
  (nothing is half-created: retry the same request).
"""

import logging
from collections.abc import Callable
from datetime import datetime
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import (
    ImproperlyConfigured,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
)
from django.http import Http404, HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.utils.translation import gettext
from ninja import Field, NinjaAPI, Router, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer, SessionAuth

from accounts.api import router as accounts_router
from alerts.api import router as alerts_router
from analytics.api import router as analytics_router
from books.reconciliation.api import router as reconciliation_router
from books.statements.api import router as statements_router
from console.api_permissions import Need, declared_need, needs
from console.api_schemas import ERROR_RESPONSES
from console.audit.api import router as audit_router
from gateway.changes_api import router as changes_router
from payouts.approval.api import router as approval_router
from payouts.drafts.api import router as payouts_router
from payouts.evidence.api import router as evidence_router
from payouts.release.api import router as release_router
from quotes.api import router as quotes_router
from staff.api_tokens import SAFE_METHODS, api_token_authenticate, read_only, token_proof
from staff.errors import ServiceError
from staff.models import ApiToken, StaffUser
from staff.roles import has_staff_role, user_roles
from staff.second_factor.state import sign_in_incomplete_error, sign_in_state
from staff.services import staff_language_set
from staff.step_up import proof_attach, proof_of
from users.api import router as users_router
from webhooks.api import router as webhooks_router

logger = logging.getLogger(__name__)


ANY_STAFF: Need = ()

# The permission of every operation, "METHOD /path" as in openapi.json, as each app declares it
# beside the operation (console.api_permissions.needs); filled when the routers are mounted below.
# tests/config/test_api_permission_first.py checks every operation of the schema against it.
OPERATION_PERMISSIONS: dict[str, Need] = {}


def require_any(user: Any, need: Need) -> None:
    """403 unless `user` holds one of `need` (token scopes included: StaffUser.has_perm)."""
    if need and not any(user.has_perm(permission) for permission in need):
        raise PermissionDenied(
            gettext("You do not have the permission %(permissions)s.")
            % {"permissions": " or ".join(need)}
        )


def _token_user(raw: str) -> StaffUser | None:
    """The staff member a bearer token acts as, carrying the token's Proof; None if it fails."""
    token = api_token_authenticate(raw.strip())
    if token is None or not has_staff_role(token.user):
        return None
    proof_attach(token.user, token_proof(token))
    return token.user


def refuse_nul_in_query(request: HttpRequest) -> None:
    """400 on a query parameter holding a NUL character: no field of ours takes one, and
    PostgreSQL refuses it in any filter (a 500 otherwise). Run by the auth, before parsing."""
    for name, values in request.GET.lists():
        if "\x00" in name or any("\x00" in value for value in values):
            field = name.replace("\x00", "") or "query"
            raise ServiceError(
                gettext("Query parameters cannot contain NUL characters."),
                errors=[(field, gettext("must not contain NUL characters"))],
            )


def _has_authorization(request: HttpRequest) -> bool:
    return "HTTP_AUTHORIZATION" in request.META


class StaffTokenAuth(HttpBearer):
    """`Authorization: Bearer <personal API token>`: the request acts as the token's owner,
    narrowed to its scopes; then the operation's permission (`need`), before any parsing.

    A request that sends an Authorization header is judged by it alone: another scheme, or a
    malformed, unknown, revoked or expired token is 401, never a fall-back to the session."""

    def __init__(self, need: Need = ANY_STAFF) -> None:
        super().__init__()
        self.need = need

    def __call__(self, request: HttpRequest) -> Any:
        refuse_nul_in_query(request)
        if not _has_authorization(request):
            return None  # no header: the session decides (StaffSessionAuth)
        scheme, _, raw = request.META["HTTP_AUTHORIZATION"].partition(" ")
        if scheme.lower() != self.openapi_scheme.lower():
            raise AuthenticationError
        user = self.authenticate(request, raw.strip())
        if user is None:
            raise AuthenticationError
        return user

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        user = _token_user(token)
        if user is None:
            return None
        request.user = user
        proof = proof_of(user)
        scopes = proof.scopes if proof is not None else None
        if scopes is not None and read_only(scopes) and request.method not in SAFE_METHODS:
            raise PermissionDenied(
                gettext("This token may only read (GET): its only scope is read.")
            )
        require_any(user, self.need)
        return user


class StaffSessionAuth(SessionAuth):
    """The browser's session (with its CSRF check), only once its sign-in is complete (the
    second factor passed where the person's roles require one: staff.second_factor.state), and
    never for a request that sent an Authorization header; then the operation's permission."""

    def __init__(self, need: Need = ANY_STAFF) -> None:
        super().__init__()
        self.need = need

    def __call__(self, request: HttpRequest) -> Any:
        refuse_nul_in_query(request)
        return super().__call__(request)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        if _has_authorization(request):
            return None
        user = super().authenticate(request, key)
        if user is None:
            return None
        state = sign_in_state(user, request.session)
        if state != "done":
            raise sign_in_incomplete_error(state)
        require_any(user, self.need)
        return user


def staff_auth(need: Need = ANY_STAFF) -> list[Any]:
    """The auth of an operation needing `need`: a token, else the session."""
    return [StaffTokenAuth(need), StaffSessionAuth(need)]


def staff_docs_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The OpenAPI page and schema: a valid bearer token or a signed-in staff session reads them;
    any other Authorization header is 401 in the one error shape (never the session); anonymous
    browsers go to the login page, role-less people get 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if _has_authorization(request):
            scheme, _, raw = request.META["HTTP_AUTHORIZATION"].partition(" ")
            user = _token_user(raw) if scheme.lower() == "bearer" else None
            if user is None:
                return _unauthorized(request)
            request.user = user
            return view(request, *args, **kwargs)
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        state = sign_in_state(request.user, request.session)
        if state != "done":
            return on_service_error(request, sign_in_incomplete_error(state))
        if not has_staff_role(request.user):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapper


api = NinjaAPI(
    title="PayOps API",
    version="1",
    description=(
        "The PayOps back office over HTTP. Authenticate with a personal API token "
        "(`Authorization: Bearer <token>`, created on your profile page or with "
        "`manage.py api_token create`); it acts within its scopes (read, prepare, approve, "
        "admin) until it expires. A caller without an operation's permission gets 403 before "
        "the body is read; a body over 2.5 MB is 413. Paths take PayOps ids; every object also "
        "shows its `upstream_id`. `?environment=NAME` selects another environment than your "
        "current one. "
        'Every error is `{"code", "message", "errors": [{"field", "message"}]}`; bad input is 400.'
    ),
    urls_namespace="api",
    auth=staff_auth(),
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
    message = gettext("The request has invalid fields.")
    return _error(request, 400, "validation_error", message, errors)


@api.exception_handler(ServiceError)
def on_service_error(request: HttpRequest, exc: ServiceError) -> HttpResponse:
    return api.create_response(request, exc.as_body(), status=exc.status)


@api.exception_handler(PermissionDenied)
def on_permission_denied(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    message = str(exc) or gettext("You do not have permission to do this.")
    return _error(request, 403, "permission_denied", message)


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _error(request, 404, "not_found", str(exc) or gettext("Not found."))


def _unauthorized(request: HttpRequest) -> HttpResponse:
    return _error(
        request,
        401,
        "unauthorized",
        gettext(
            "Send a valid personal API token (not expired, not revoked): Authorization: Bearer …"
        ),
    )


@api.exception_handler(AuthenticationError)
def on_unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _unauthorized(request)


@api.exception_handler(RequestDataTooBig)
def on_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    """A body over DATA_UPLOAD_MAX_MEMORY_SIZE: Django refuses it before reading or parsing."""
    return _error(
        request,
        413,
        "payload_too_large",
        gettext("The request body is too large."),
        [{"field": "body", "message": gettext("too large")}],
    )


@api.exception_handler(MultiPartParserError)
def on_bad_multipart(request: HttpRequest, exc: MultiPartParserError) -> HttpResponse:
    """A multipart body Django cannot split (no or a bad boundary, a broken part)."""
    return _error(
        request,
        400,
        "validation_error",
        gettext("The multipart body cannot be read."),
        [{"field": "body", "message": gettext("is not valid multipart/form-data (boundary?)")}],
    )


@api.exception_handler(SuspiciousOperation)
def on_suspicious(request: HttpRequest, exc: SuspiciousOperation) -> HttpResponse:
    """Too many fields or files, and the like: the request, not us."""
    return _error(request, 400, "bad_request", gettext("The request cannot be accepted as sent."))


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    if exc.status_code == 400:  # ninja's "Cannot parse request body": bad input like any other
        errors = [{"field": "body", "message": str(exc)}]
        message = gettext("The request body cannot be read.")
        return _error(request, 400, "validation_error", message, errors)
    return _error(request, exc.status_code, f"http_{exc.status_code}", str(exc))


@api.exception_handler(Exception)
def on_unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    """Still the one shape; the traceback goes to the log, never to the caller."""
    logger.exception("unhandled API error on %s %s", request.method, request.path)
    return _error(request, 500, "server_error", gettext("Something went wrong on our side."))


class MeOut(Schema):
    email: str
    full_name: str
    roles: list[str]
    token_scopes: list[str] | None = Field(
        None, description="The API token's scopes (null when signed in with a session)."
    )
    token_expires_at: datetime | None = Field(None, description="When the API token expires.")
    language: str = Field(
        "",
        description="The language PayOps speaks to this person (en, es, pt-br); empty: browser's",
    )


@api.get("/me", response={200: MeOut, **ERROR_RESPONSES}, tags=["staff"])
@needs()
def me(request: HttpRequest) -> MeOut:
    """The logged-in staff member, their roles, and the token's scopes and expiry."""
    user = request.user
    proof = proof_of(user)
    token = None
    if proof is not None and proof.token_id is not None:
        token = ApiToken.objects.filter(pk=proof.token_id).first()
    return MeOut(
        email=user.email,  # type: ignore[union-attr]
        full_name=user.full_name,  # type: ignore[union-attr]
        roles=[role.key for role in user_roles(user)],
        token_scopes=list(token.scopes) if token else None,
        token_expires_at=token.expires_at if token else None,
        language=user.language,  # type: ignore[union-attr]
    )


class LanguageIn(Schema):
    language: str = Field(
        description="One of en, es, pt-br; empty for the language the browser asks for."
    )


class LanguageOut(Schema):
    language: str


@api.put("/me/language", response={200: LanguageOut, **ERROR_RESPONSES}, tags=["staff"])
@needs()
def me_language(request: HttpRequest, payload: LanguageIn) -> LanguageOut:
    """Choose the language of your pages and emails (the profile page's choice)."""
    user = staff_language_set(
        user=request.user,  # type: ignore[arg-type]
        language=payload.language,
        by=request.user,  # type: ignore[arg-type]
    )
    return LanguageOut(language=user.language)


# Each app's Router (their shared pieces live in gateway.api_support, so nothing here is a cycle).
MOUNTS: tuple[tuple[str, Router], ...] = (
    ("", users_router),
    ("", accounts_router),
    ("", quotes_router),
    ("", payouts_router),
    ("", approval_router),
    ("", release_router),
    ("", evidence_router),
    ("/webhooks", webhooks_router),
    ("", changes_router),
    ("/audit", audit_router),
    ("/reconciliation", reconciliation_router),
    ("/books", statements_router),
    ("/analytics", analytics_router),
    ("/alerts", alerts_router),
)


def _guard(prefix: str, router: Router) -> None:
    """Give each of the router's operations the auth of the permission it declares (`@needs`).

    Set on the router's own operations before mounting (ninja copies an operation's auth when it
    binds it to the API), so the permission is checked before ninja parses the request. An
    operation that declares none stops the start-up."""
    for path, path_view in router.path_operations.items():
        for operation in path_view.operations:
            need = declared_need(operation.view_func)
            keys = [f"{method} {prefix}{path}" for method in operation.methods]
            if need is None:
                raise ImproperlyConfigured(
                    f"{', '.join(keys)} declares no permission: add @needs(...) under its route."
                )
            OPERATION_PERMISSIONS.update(dict.fromkeys(keys, need))
            auth = staff_auth(need)
            operation.auth_param = auth
            operation._set_auth(auth)


_guard("", api.default_router)
for _prefix, _router in MOUNTS:
    _guard(_prefix, _router)
    api.add_router(_prefix, _router)
