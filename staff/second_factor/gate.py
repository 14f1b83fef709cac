"""The gate: a session that passed the password but not (yet) the second factor reaches nothing
but the second-factor pages and sign-out. Pages redirect there; the API refuses in the one error
shape. Whether a session is signed in is decided once, in staff.second_factor.state (the API's
session auth and the websockets ask the same rule).

An API request with an Authorization header passes the gate to the API's auth, which accepts only
a valid bearer token then and never falls back to the session (config.api.StaffTokenAuth).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import Resolver404, ResolverMatch, resolve, reverse

from staff.second_factor.state import sign_in_incomplete_error, sign_in_state

# What an unverified session may reach, by URL name (namespace:name).
_OPEN_ALWAYS = frozenset({"staff:logout", "otp_webauthn:js-i18n-catalog"})
_OPEN_TO_VERIFY = frozenset(
    {
        "staff:second_factor",
        "otp_webauthn:credential-authentication-begin",
        "otp_webauthn:credential-authentication-complete",
    }
)
_OPEN_TO_ENROL = frozenset(
    {
        "staff:enrol",
        "staff:enrol_totp",
        "staff:enrol_passkey_done",
        "otp_webauthn:credential-registration-begin",
        "otp_webauthn:credential-registration-complete",
    }
)


def _resolved(request: HttpRequest) -> ResolverMatch | None:
    try:
        return resolve(request.path_info)
    except Resolver404:
        return None


def second_factor_gate(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[..., object]:
    def middleware(request: HttpRequest) -> HttpResponse:
        # No session cookie, no signed-in person: the webhook receiver and static files load
        # neither session nor user here.
        if settings.SESSION_COOKIE_NAME not in request.COOKIES:
            return get_response(request)
        match = _resolved(request)
        # Views that never act as a person (Django's login_not_required: health probes, the
        # webhook receiver) load no session or user here either.
        if match is not None and getattr(match.func, "login_required", True) is False:
            return get_response(request)
        api = request.path_info.startswith("/api/")
        if api and "HTTP_AUTHORIZATION" in request.META:
            return get_response(request)
        if not request.user.is_authenticated:
            return get_response(request)
        state = sign_in_state(request.user, request.session)
        if state == "done":
            return get_response(request)
        name = match.view_name if match is not None else ""
        allowed = _OPEN_TO_VERIFY if state == "verify" else _OPEN_TO_ENROL
        if name in _OPEN_ALWAYS or name in allowed:
            return get_response(request)
        if api:
            error = sign_in_incomplete_error(state)
            return JsonResponse(error.as_body(), status=error.status)
        target = reverse("staff:second_factor" if state == "verify" else "staff:enrol")
        if request.method == "GET":
            target += "?" + urlencode({"next": request.get_full_path()})
        return HttpResponseRedirect(target)

    return middleware
