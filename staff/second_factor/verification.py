"""A second factor passed or failed: the session is verified, and the audit trail says how.

Wrong codes count against the device's own throttle (django-otp's ThrottlingMixin on TOTP apps
and recovery codes: each failure doubles the wait before the next try), on top of axes's lock on
the password step; there is no second lockout system.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext
from django_otp import login as otp_login
from django_otp.models import Device

from staff.actions import record_action  # no live page for these records: announce=False
from staff.models import StaffUser
from staff.second_factor.devices import (
    enrolment_required,
    has_second_factor,
    recovery_device,
    second_factor_devices,
)
from staff.second_factor.errors import SecondFactorNotAllowed, SecondFactorRefused
from staff.second_factor.models import AuthenticatorDevice, RecoveryCodeDevice
from staff.second_factor.recovery import recovery_codes_issue
from staff.second_factor.state import is_verified
from staff.step_up import (
    SECOND_FACTOR_AT_SESSION_KEY,
    SECOND_FACTOR_METHOD_SESSION_KEY,
    Proof,
    proof_attach,
    step_up_require,
)

Method = Literal["totp", "passkey", "recovery_code"]
Purpose = Literal["sign_in", "step_up", "enrolment"]
# The recovery codes a first enrolment issued, kept in the session until shown once.
NEW_RECOVERY_CODES_SESSION_KEY = "payops_new_recovery_codes"


@dataclass(frozen=True)
class Verified:
    method: Method
    recovery_codes_left: int | None = None


def _user(request: HttpRequest) -> StaffUser:
    return request.user  # type: ignore[return-value]


def second_factor_passed(
    request: HttpRequest, *, device: Device, method: Method, purpose: Purpose
) -> None:
    """Mark this session verified by `device` now: django-otp's device, our step-up clock, audit."""
    user = _user(request)
    now = timezone.now()
    with transaction.atomic():
        if purpose == "sign_in":
            # A new session key once the sign-in is complete (as Django does at login).
            request.session.cycle_key()
        otp_login(request, device)
        request.session[SECOND_FACTOR_AT_SESSION_KEY] = now.isoformat()
        request.session[SECOND_FACTOR_METHOD_SESSION_KEY] = method
        record_action(
            actor=user,
            action="staff.second_factor_verified",
            target=user,
            details={"method": method, "purpose": purpose},
            announce=False,
        )
    proof_attach(user, Proof(method="session", second_factor_at=now, second_factor_method=method))


def _refuse(user: StaffUser, *, purpose: Purpose, message: str, throttled: bool) -> None:
    with transaction.atomic():
        record_action(
            actor=user,
            action="staff.second_factor_failed",
            target=user,
            details={"purpose": purpose, "throttled": throttled},
            announce=False,
        )
    raise SecondFactorRefused(
        message, code="second_factor_throttled" if throttled else "second_factor_invalid"
    )


def _throttled_devices(user: StaffUser) -> list[AuthenticatorDevice | RecoveryCodeDevice]:
    """The person's code-checking devices (authenticator apps, recovery codes), their rows locked
    in pk order until the transaction ends: one person, one throttle, checked and counted by one
    request at a time (PostgreSQL; SQLite writes one at a time anyway)."""
    apps = AuthenticatorDevice.objects.select_for_update().filter(user=user, confirmed=True)
    recovery = RecoveryCodeDevice.objects.select_for_update().filter(user=user, confirmed=True)
    return [*apps.order_by("pk"), *recovery.order_by("pk")]


def _check_code(
    user: StaffUser, typed: str
) -> tuple[AuthenticatorDevice | RecoveryCodeDevice | None, bool]:
    """(the device `typed` is a code of, or None; whether the person is throttled). Locked: a
    throttled person's code is not even checked, and a wrong code counts on every device, so
    wrong recovery codes hold back the app's codes too and the other way round."""
    with transaction.atomic():
        devices = _throttled_devices(user)
        if any(not device.verify_is_allowed()[0] for device in devices):
            return None, True
        for device in devices:
            kind_fits = typed.isdigit() == isinstance(device, AuthenticatorDevice)
            if kind_fits and device.verify_token(typed):
                for other in devices:  # one person, one throttle: the right code resets it all
                    if other is not device and other.throttling_failure_count:
                        other.throttle_reset(commit=True)
                return device, False
        for device in devices:
            if typed.isdigit() != isinstance(device, AuthenticatorDevice):
                device.throttle_increment(commit=True)  # the devices verify_token did not count
    return None, False


def second_factor_verify(request: HttpRequest, *, code: str, purpose: Purpose) -> Verified:
    """Check a code from an authenticator app, or a recovery code (used up); verify the session."""
    user = _user(request)
    typed = "".join(str(code or "").split())
    if not typed:
        raise SecondFactorRefused(
            gettext("Enter the code from your authenticator app, or a recovery code.")
        )
    device, throttled = _check_code(user, typed)
    if isinstance(device, AuthenticatorDevice):
        second_factor_passed(request, device=device, method="totp", purpose=purpose)
        return Verified(method="totp")
    if isinstance(device, RecoveryCodeDevice):
        second_factor_passed(request, device=device, method="recovery_code", purpose=purpose)
        return Verified(method="recovery_code", recovery_codes_left=device.remaining())
    _refuse(
        user,
        purpose=purpose,
        throttled=throttled,
        message=(
            gettext("Too many wrong codes: wait a minute, then enter a new code.")
            if throttled
            else gettext(
                "That code is not right (or was already used). Enter the current code from "
                "your authenticator app, or an unused recovery code."
            )
        ),
    )
    raise AssertionError("unreachable")  # _refuse raises


def _may_add(request: HttpRequest) -> None:
    """A person adds a device during enrolment (none yet), or later after a fresh step-up."""
    user = _user(request)
    if has_second_factor(user):
        step_up_require(user, action="second_factor.add")


def first_device_done(request: HttpRequest, *, device: Device, method: Method) -> None:
    """After a device is confirmed: audit it; a first device verifies the session and issues
    recovery codes (kept in the session until shown once)."""
    user = _user(request)
    record_action(
        actor=user,
        action="staff.second_factor_enrolled",
        target=user,
        details={"method": method, "name": device.name},
        announce=False,
    )
    if recovery_device(user) is None:
        codes = recovery_codes_issue(user=user, by=user)
        request.session[NEW_RECOVERY_CODES_SESSION_KEY] = codes
    if not is_verified(user) or not request.session.get(SECOND_FACTOR_AT_SESSION_KEY):
        second_factor_passed(request, device=device, method=method, purpose="enrolment")


def totp_confirm(request: HttpRequest, *, device: AuthenticatorDevice, code: str) -> None:
    """Confirm a pending authenticator app with its first code."""
    user = _user(request)
    if device.user_id != user.pk or device.confirmed:
        raise SecondFactorNotAllowed(gettext("This authenticator app is not being set up."))
    _may_add(request)
    typed = "".join(str(code or "").split())
    if not typed.isdigit() or not device.verify_token(typed):
        _refuse(
            user,
            purpose="enrolment",
            throttled=not device.verify_is_allowed()[0],
            message=gettext("That code is not right. Enter the 6-digit code your app shows now."),
        )
    with transaction.atomic():
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        first_device_done(request, device=device, method="totp")


def second_factor_remove(request: HttpRequest, *, device: Device) -> None:
    """Remove one of the person's own devices: needs step-up; never the last of a required role."""
    user = _user(request)
    step_up_require(user, action="second_factor.remove")
    devices = second_factor_devices(user)
    if device.user_id != user.pk or device not in devices:
        raise SecondFactorNotAllowed(gettext("That device is not one of yours."))
    if len(devices) == 1 and enrolment_required(user):
        raise SecondFactorNotAllowed(
            gettext(
                "Your role needs a second factor: add another device before removing this one."
            ),
            code="second_factor_last_device",
        )
    with transaction.atomic():
        name = device.name
        device.delete()
        record_action(
            actor=user,
            action="staff.second_factor_removed",
            target=user,
            details={"name": name},
            announce=False,
        )


def recovery_codes_regenerate(request: HttpRequest) -> list[str]:
    """New recovery codes from the profile (the old ones stop working): needs step-up."""
    user = _user(request)
    step_up_require(user, action="second_factor.recovery_codes")
    if not has_second_factor(user):
        raise SecondFactorNotAllowed(gettext("Add an authenticator app or a passkey first."))
    return recovery_codes_issue(user=user, by=user)
