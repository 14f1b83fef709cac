"""Staff middleware: the session's proof of identity attached to request.user, lazily; a page
refused for want of a fresh second factor sent to the step-up prompt."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from urllib.parse import urlencode, urlsplit

from django.contrib import messages
from django.contrib.auth import get_user
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import translation
from django.utils.deprecation import MiddlewareMixin
from django.utils.functional import SimpleLazyObject
from django.utils.http import url_has_allowed_host_and_scheme
from django_htmx.http import HttpResponseClientRedirect

from staff.step_up import (
    SECOND_FACTOR_AT_SESSION_KEY,
    SECOND_FACTOR_METHOD_SESSION_KEY,
    SECOND_FACTOR_METHODS,
    Proof,
    StepUpRequired,
    proof_attach,
)

# The JSON API answers StepUpRequired itself (403 `step_up_required`), never with a redirect.
API_PREFIX = "/api/"


def session_proof(request: HttpRequest) -> Proof:
    """The proof a browser session holds: when (if ever) it last verified a second factor, and
    which kind it was."""
    raw = request.session.get(SECOND_FACTOR_AT_SESSION_KEY)
    at = None
    if isinstance(raw, str):
        try:
            at = datetime.fromisoformat(raw)
        except ValueError:
            at = None
    method = request.session.get(SECOND_FACTOR_METHOD_SESSION_KEY)
    return Proof(
        method="session",
        second_factor_at=at,
        second_factor_method=method if at and method in SECOND_FACTOR_METHODS else "",
    )


def proof_middleware(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable[..., object]:
    """Replace request.user (after AuthenticationMiddleware) by one that carries its Proof.

    Lazy like Django's own: a request that never looks at its user (the webhook receiver, static
    files) loads no session and no user.
    """

    def load(request: HttpRequest) -> object:
        user = get_user(request)
        if user.is_authenticated:
            proof_attach(user, session_proof(request))
        return user

    def middleware(request: HttpRequest) -> HttpResponse:
        request.user = SimpleLazyObject(lambda: load(request))  # type: ignore[assignment]
        return get_response(request)

    return middleware


def language_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """After LocaleMiddleware and proof_middleware: a signed-in person's own language wins.

    A request with no session cookie (the webhook receiver, the API with a token) reads no
    session and keeps the browser's Accept-Language.
    """

    def middleware(request: HttpRequest) -> HttpResponse:
        language: str = (
            getattr(request.user, "language", "") if request.user.is_authenticated else ""
        )
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        return get_response(request)

    return middleware


def _local(request: HttpRequest, url: str) -> str:
    """`url`'s path and query when it points at this site, else ""."""
    if not url or not url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return ""
    parts = urlsplit(url)
    if not parts.path.startswith("/"):
        return ""
    return parts.path + (f"?{parts.query}" if parts.query else "")


def step_up_return_path(request: HttpRequest) -> str:
    """Where to come back after a step-up prompt: a GET's own page; for a POST (or an HTMX call)
    the page it was sent from (HX-Current-URL, then the Referer) when it is ours, else the path."""
    if request.method in ("GET", "HEAD") and not request.headers.get("HX-Request"):
        return request.get_full_path()
    for header in ("HX-Current-URL", "Referer"):
        found = _local(request, request.headers.get(header, ""))
        if found:
            return found
    return request.path


def step_up_url(next_path: str) -> str:
    """The step-up prompt, coming back to `next_path` afterwards."""
    return reverse("staff:step_up") + "?" + urlencode({"next": next_path})


class StepUpMiddleware(MiddlewareMixin):
    """A page view whose service raised StepUpRequired sends the person to the step-up prompt.

    A plain request gets a 302 to `staff:step_up?next=<the page to come back to>`, an HTMX request
    an `HX-Redirect` to it, both with a message saying why. The JSON API is left alone: its
    exception handler answers 403 `step_up_required` (config/api.py). A view may name the page to
    come back to by setting `exc.next_url` (a local path) before re-raising.
    """

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, StepUpRequired) or request.path.startswith(API_PREFIX):
            return None
        next_path = _local(request, getattr(exception, "next_url", "")) or step_up_return_path(
            request
        )
        target = step_up_url(next_path)
        messages.warning(request, exception.message)
        if request.headers.get("HX-Request"):
            return HttpResponseClientRedirect(target)  # 200 with HX-Redirect: htmx navigates
        return HttpResponseRedirect(target)
