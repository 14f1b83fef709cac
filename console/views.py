"""The console's own pages: dashboard, system health, coming soon, and the error pages."""

from __future__ import annotations

import inspect
import json
from typing import Any

import django
from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseServerError
from django.shortcuts import render
from django.template import loader
from django.utils.translation import gettext, gettext_lazy, ngettext
from django.views.decorators.csrf import requires_csrf_token

from console import health
from console.dashboard import panels_for
from console.lists import fragment_template
from console.navigation import ITEMS_BY_KEY
from console.templatetags.ui import duration
from staff import roles
from staff.roles import user_roles


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "console/dashboard.html",
        {"roles_held": user_roles(request.user), "panels": panels_for(request)},
    )


@login_required
def coming_soon(request: HttpRequest, feature: str) -> HttpResponse:
    """Stands in for a page a later issue builds; checks the same permission that page will."""
    item = ITEMS_BY_KEY.get(feature)
    if item is None or not item.is_placeholder:
        raise Http404("No such feature.")
    if not item.visible_to(request.user):
        raise PermissionDenied(
            gettext("%(label)s needs the permission %(permission)s.")
            % {"label": item.label, "permission": item.permission}
        )
    return render(request, "console/coming_soon.html", {"item": item})


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _readiness() -> tuple[int, dict[str, Any]]:
    """The /readyz report (console.health), so this page and the probe never disagree."""
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


# A check's figures by the suffix of their key: `duration_ms`, `age_seconds` (console.health).
DURATION_SUFFIXES = {"_ms": "ms", "_seconds": "s"}
# A check's status and the console's own detail keys, in words (a check names its own keys when
# it registers: console.health.register_check's detail_labels).
STATUS_WORDS = {
    "ok": gettext_lazy("Passing"),
    "warning": gettext_lazy("Needs a look"),
    "fail": gettext_lazy("Failing"),
    "unknown": gettext_lazy("Unknown"),
}
DETAIL_WORDS = {
    "detail": gettext_lazy("Details"),
    "age": gettext_lazy("Age"),
    "vendor": gettext_lazy("Database"),
    "backend": gettext_lazy("Backend"),
    "cluster": gettext_lazy("Worker cluster"),
}


def status_words(status: str) -> str:
    word = STATUS_WORDS.get(status)
    return status if word is None else str(word)


def health_row(name: str, check: Any) -> dict[str, Any]:
    """One check of the readiness report as the page shows it: its name and status in words,
    how long it took, and its other details labelled in words, durations as a person reads them
    (`1.2 s`)."""
    registered = health.CHECKS.get(name)
    labels = {**DETAIL_WORDS, **(registered.detail_labels if registered else {})}
    check = check if isinstance(check, dict) else {"status": check}
    details = []
    for key, value in check.items():
        if key in ("status", "duration_ms"):
            continue
        suffix = next((end for end in DURATION_SUFFIXES if key.endswith(end)), "")
        key = key.removesuffix(suffix)
        label = str(labels.get(key) or key.replace("_", " "))
        if suffix and value is not None:
            value = duration(value, DURATION_SUFFIXES[suffix])
        details.append((label, "—" if value is None else value))
    status = str(check.get("status", "unknown"))
    return {
        "name": str(registered.label or name) if registered else name,
        "status": status,
        "status_label": status_words(status),
        "took": duration(check.get("duration_ms")),
        "details": details,
    }


@login_required
@permission_required(roles.SYSTEM_HEALTH_VIEW, raise_exception=True)
def system_health(request: HttpRequest) -> HttpResponse:
    status_code, report = _readiness()
    checks = [
        health_row(name, check) for name, check in sorted((report.get("checks") or {}).items())
    ]
    warnings = list(report.get("warnings") or [])
    overall = status_words(str(report.get("status", "unknown")))
    if warnings:
        overall += ", " + ngettext("%(count)s warning", "%(count)s warnings", len(warnings)) % {
            "count": len(warnings)
        }
    context = {
        "ready": status_code == 200,
        "warnings": warnings,
        "overall": overall,
        "checks": checks,
        "facts": [
            (gettext("Environment"), settings.PAYOPS_ENVIRONMENT),
            ("Django", django.get_version()),
            (gettext("Database"), connection.vendor),
            (gettext("Cache"), settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]),
        ],
    }
    return render(
        request, fragment_template(request, "console/system_health.html", "checks"), context
    )


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
