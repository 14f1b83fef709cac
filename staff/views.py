"""Staff pages (placeholder; the foundation work fills this in)."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    return HttpResponse("PayOps")


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return HttpResponse("Forbidden", status=403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return HttpResponse("Not found", status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    return HttpResponse("Server error", status=500)
