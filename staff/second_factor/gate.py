"""The gate: a session that passed the password but not (yet) the second factor reaches nothing
but the second-factor pages and sign-out. Pages redirect there; the API refuses in the one error
shape. Bearer tokens are not sessions: the API's token auth decides for them.

Fail-closed: the state is read from the person's devices and roles on each request, so a session
made any way (our sign-in, the Django admin's login, a test's force_login) is held the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import Resolver404, ResolverMatch, resolve, reverse
from django.utils.translation import gettext
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.models import Device

from staff.errors import ServiceError
from staff.models import StaffUser
from staff.second_factor.devices import enrolment_required, has_second_factor

State = Literal["done", "verify", "enrol"]

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


def is_verified(user: object) -> bool:
    """Whether django-otp's middleware found this session verified by one of the user's devices."""
    check = getattr(user, "is_verified", None)
    return bool(check()) if callable(check) else False


def session_sign_in_complete(user: StaffUser, session: Mapping[str, Any]) -> bool:
    """The gate's rule where no OTPMiddleware ran (websockets): whether this session finished
    signing in, i.e. its verified device is one of the person's own, or they need none."""
    persistent_id = session.get(DEVICE_ID_SESSION_KEY)
    device = Device.from_persistent_id(persistent_id) if persistent_id else None
    if device is not None and device.user_id == user.pk and device.confirmed:
        return True
    return not has_second_factor(user) and not enrolment_required(user)


def sign_in_state(request: HttpRequest) -> State:
    """Where this session stands: done, must verify its second factor, or must enrol one."""
    user = request.user
    if not user.is_authenticated:
        return "done"
    if is_verified(user):
        return "done"
    if has_second_factor(user):
        return "verify"
    if enrolment_required(user):
        return "enrol"
    return "done"


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
        state = sign_in_state(request)
        if state == "done":
            return get_response(request)
        name = match.view_name if match is not None else ""
        allowed = _OPEN_TO_VERIFY if state == "verify" else _OPEN_TO_ENROL
        if name in _OPEN_ALWAYS or name in allowed:
            return get_response(request)
        what = "verify your second factor" if state == "verify" else "set up a second factor"
        if api:
            error = ServiceError(
                gettext("Sign-in is not complete: %(what)s first (on the sign-in pages).")
                % {"what": what},
                code="second_factor_required",
                status=401,
            )
            return JsonResponse(error.as_body(), status=error.status)
        target = reverse("staff:second_factor" if state == "verify" else "staff:enrol")
        if request.method == "GET":
            target += "?" + urlencode({"next": request.get_full_path()})
        return HttpResponseRedirect(target)

    return middleware
