"""Passkeys: django-otp-webauthn's four JSON endpoints, wired to our session, rules and audit.

They keep the library's URL names (namespace `otp_webauthn`), so its template tags and static
JavaScript work unchanged; a passkey is only ever a second factor after the password
(settings.OTP_WEBAUTHN_ALLOW_PASSWORDLESS_LOGIN is off).
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse, JsonResponse
from django.urls import path
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.i18n import JavaScriptCatalog
from django_otp_webauthn import views as webauthn
from django_otp_webauthn.models import WebAuthnCredential

from staff.errors import ServiceError
from staff.second_factor.state import is_verified
from staff.second_factor.verification import (
    Purpose,
    _may_add,
    first_device_done,
    second_factor_passed,
)


class _OurErrors:
    def handle_exception(self, exc: Exception) -> HttpResponse:
        # The library's script shows `detail`; our refusals (step-up) say the same in its shape.
        if isinstance(exc, ServiceError):
            return JsonResponse({"detail": exc.message, "code": exc.code}, status=exc.status)
        return super().handle_exception(exc)  # type: ignore[misc]


@method_decorator(never_cache, name="dispatch")
class RegistrationBegin(_OurErrors, webauthn.BeginCredentialRegistrationView):
    def check_can_register(self) -> None:
        _may_add(self.request)


@method_decorator(never_cache, name="dispatch")
class RegistrationComplete(_OurErrors, webauthn.CompleteCredentialRegistrationView):
    def check_can_register(self) -> None:
        _may_add(self.request)

    def post(self, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().post(*args, **kwargs)
        if response.status_code == 200:
            device = WebAuthnCredential.objects.get(pk=json.loads(response.content)["id"])
            if not device.name:
                device.name = "Passkey"
                device.save(update_fields=["name"])
            first_device_done(self.request, device=device, method="passkey")
        return response


@method_decorator(never_cache, name="dispatch")
class AuthenticationBegin(_OurErrors, webauthn.BeginCredentialAuthenticationView):
    pass


@method_decorator(never_cache, name="dispatch")
class AuthenticationComplete(_OurErrors, webauthn.CompleteCredentialAuthenticationView):
    def complete_auth(self, device: WebAuthnCredential) -> None:
        # Passwordless sign-in is off: the person is signed in with their password already.
        purpose: Purpose = "step_up" if is_verified(self.request.user) else "sign_in"
        second_factor_passed(self.request, device=device, method="passkey", purpose=purpose)


app_name = "otp_webauthn"

urlpatterns = [
    path(
        "registration/begin/",
        RegistrationBegin.as_view(),
        name="credential-registration-begin",
    ),
    path(
        "registration/complete/",
        RegistrationComplete.as_view(),
        name="credential-registration-complete",
    ),
    path(
        "authentication/begin/",
        AuthenticationBegin.as_view(),
        name="credential-authentication-begin",
    ),
    path(
        "authentication/complete/",
        AuthenticationComplete.as_view(),
        name="credential-authentication-complete",
    ),
    path(
        "jsi18n/",
        JavaScriptCatalog.as_view(packages=["django_otp_webauthn"]),
        name="js-i18n-catalog",
    ),
]
