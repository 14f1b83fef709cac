"""Staff sign-in pages: sign-in (with the demo logins where seeded), sign-out, password change.

The second step (second factor), enrolment and step-up are staff.second_factor.views."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordChangeForm
from django.http import HttpRequest, HttpResponse
from django.urls import reverse_lazy
from django.utils.translation import gettext

from staff.actions import record_action  # no live page for these records: announce=False
from staff.bootstrap import DEMO_PASSWORD, demo_logins
from staff.forms import StaffLoginForm
from staff.second_factor.demo import demo_codes


class LoginView(auth_views.LoginView):
    template_name = "staff/login.html"
    form_class = StaffLoginForm
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["demo_logins"] = demo_logins()
        context["demo_password"] = DEMO_PASSWORD
        context["demo_codes"] = demo_codes()
        return context


class LogoutView(auth_views.LogoutView):
    """Sign-out by POST only (Django's default); says so on the sign-in page."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        messages.info(request, gettext("You have signed out."))
        return response


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "staff/password_change.html"
    form_class = PasswordChangeForm
    # A URL name, not an import: staff depends on no other project app.
    success_url = reverse_lazy("console:dashboard")

    def form_valid(self, form: PasswordChangeForm) -> HttpResponse:
        response = super().form_valid(form)
        record_action(
            actor=form.user, action="staff.password_changed", target=form.user, announce=False
        )
        messages.success(self.request, gettext("Your password has been changed."))
        return response
