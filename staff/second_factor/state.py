"""Whether a session has finished signing in: the one rule the sign-in gate (pages), the API's
session auth and the websocket consumers all ask, so no door holds a session to a weaker rule.

A session is signed in when it verified one of the person's own confirmed devices (django-otp
keeps that device's id in the session), or when the person has no second factor and their roles
require none. Fail-closed: read from the person's devices and roles each time, so a session made
any way (our sign-in, the Django admin's login, a test's force_login) is held the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from django.utils.translation import gettext
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.models import Device

from staff.errors import ServiceError
from staff.second_factor.devices import enrolment_required, has_second_factor

State = Literal["done", "verify", "enrol"]


def is_verified(user: object) -> bool:
    """Whether django-otp's middleware found this session verified by one of the user's devices."""
    check = getattr(user, "is_verified", None)
    return bool(check()) if callable(check) else False


def _device_verified(user: Any, session: Mapping[str, Any]) -> bool:
    if is_verified(user):  # OTPMiddleware read the session's device already (pages, API)
        return True
    persistent_id = session.get(DEVICE_ID_SESSION_KEY)
    device = Device.from_persistent_id(persistent_id) if persistent_id else None
    return device is not None and device.user_id == user.pk and bool(device.confirmed)


def sign_in_state(user: Any, session: Mapping[str, Any]) -> State:
    """Where a signed-in person's session stands: done, must verify its second factor, or must
    enrol one first."""
    if _device_verified(user, session):
        return "done"
    if has_second_factor(user):
        return "verify"
    if enrolment_required(user):
        return "enrol"
    return "done"


def sign_in_complete(user: Any, session: Mapping[str, Any] | None) -> bool:
    """Whether this person's session may act as them: authenticated and past the whole sign-in."""
    if user is None or not user.is_authenticated or session is None:
        return False
    return sign_in_state(user, session) == "done"


def sign_in_incomplete_error(state: State) -> ServiceError:
    """The refusal (401 `second_factor_required`) of a session still at its second step."""
    what = (
        gettext("verify your second factor")
        if state == "verify"
        else gettext("set up a second factor")
    )
    return ServiceError(
        gettext("Sign-in is not complete: %(what)s first (on the sign-in pages).") % {"what": what},
        code="second_factor_required",
        status=401,
    )
