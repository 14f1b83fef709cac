"""Staff pages: sign-in, sign-out, password change, dashboard, system health, error pages."""

from __future__ import annotations

import inspect
import json
from typing import Any

import django
from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required, permission_required
from django.contrib.auth.forms import PasswordChangeForm
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseServerError
from django.shortcuts import render
from django.template import loader
from django.urls import reverse_lazy
from django.views.decorators.csrf import requires_csrf_token

from staff import health, roles
from staff.bootstrap import DEMO_PASSWORD, demo_logins
from staff.dashboard import panels_for
from staff.forms import StaffLoginForm
from staff.navigation import ITEMS_BY_KEY
from staff.roles import user_roles
from staff.services import audit_record


class LoginView(auth_views.LoginView):
    template_name = "staff/login.html"
    form_class = StaffLoginForm
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["demo_logins"] = demo_logins()
        context["demo_password"] = DEMO_PASSWORD
        return context


class LogoutView(auth_views.LogoutView):
    """Sign-out by POST only (Django's default); says so on the sign-in page."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        messages.info(request, "You have signed out.")
        return response


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "staff/password_change.html"
    form_class = PasswordChangeForm
    success_url = reverse_lazy("staff:dashboard")

    def form_valid(self, form: PasswordChangeForm) -> HttpResponse:
        response = super().form_valid(form)
        audit_record(actor=form.user, action="staff.password_changed", target=form.user)
        messages.success(self.request, "Your password has been changed.")
        return response


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "staff/dashboard.html",
        {"roles_held": user_roles(request.user), "panels": panels_for(request)},
    )


@login_required
def coming_soon(request: HttpRequest, feature: str) -> HttpResponse:
    """Stands in for a page a later issue builds; checks the same permission that page will."""
    item = ITEMS_BY_KEY.get(feature)
    if item is None or not item.is_placeholder:
        raise Http404("No such feature.")
    if not item.visible_to(request.user):
        raise PermissionDenied(f"{item.label} needs the permission {item.permission}.")
    return render(request, "staff/coming_soon.html", {"item": item})


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _readiness() -> tuple[int, dict[str, Any]]:
    """The /readyz report (staff.health), so this page and the probe never disagree."""
    probe = HttpRequest()
    probe.method = "GET"
    probe.path = "/readyz"
    response = health.readyz(probe)
    if inspect.isawaitable(response):
        response = async_to_sync(_awaited)(response)
    try:
        body = json.loads(response.content)
    except ValueError:
        body = {"status": "unreadable", "checks": {}}
    return response.status_code, body


@login_required
@permission_required(roles.SYSTEM_HEALTH_VIEW, raise_exception=True)
def system_health(request: HttpRequest) -> HttpResponse:
    status_code, report = _readiness()
    checks = []
    for name, check in sorted((report.get("checks") or {}).items()):
        check = check if isinstance(check, dict) else {"status": check}
        extra = {key: value for key, value in check.items() if key != "status"}
        checks.append({"name": name, "status": str(check.get("status", "unknown")), "extra": extra})
    context = {
        "ready": status_code == 200,
        "overall": report.get("status", "unknown"),
        "checks": checks,
        "facts": [
            ("Environment", settings.PAYOPS_ENVIRONMENT),
            ("Django", django.get_version()),
            ("Database", connection.vendor),
            ("Cache", settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]),
        ],
    }
    template = "staff/system_health.html"
    if getattr(request, "htmx", False):  # django_htmx sets it; the fragment alone for a swap
        template += "#checks"
    return render(request, template, context)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(
        request,
        "403.html",
        {"roles_held": user_roles(getattr(request, "user", None))},
        status=403,
    )


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "404.html", status=404)


@requires_csrf_token
def server_error(request: HttpRequest) -> HttpResponse:
    # No request context: the database or a context processor may be what failed.
    return HttpResponseServerError(loader.get_template("500.html").render())
