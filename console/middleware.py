"""Shell middleware: a page answering 405 (GET on a POST-only page) renders in the shell."""

from __future__ import annotations

from collections.abc import Callable
from inspect import iscoroutinefunction
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.decorators import sync_and_async_middleware

# The JSON API and the admin answer their own 405s in their own shapes.
OWN_ERROR_PAGES = ("/api/", "/admin/")


def wants_page(request: HttpRequest, response: HttpResponse) -> bool:
    """
    Django's require_POST / View.http_method_not_allowed answer an empty 405: fill it, for the
    back office's own pages only (not a request routed to another URLconf, such as the emulator's,
    and not a client that asked for something other than HTML).
    """
    return (
        response.status_code == 405
        and not response.content
        and getattr(request, "urlconf", None) in (None, settings.ROOT_URLCONF)
        and not request.path.startswith(OWN_ERROR_PAGES)
        and request.accepts("text/html")
    )


def method_not_allowed_page(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    allowed = [m.strip() for m in response.get("Allow", "").split(",") if m.strip()]
    page = render(
        request,
        "405.html",
        {"method": request.method, "allowed": allowed},
        status=405,
    )
    if "Allow" in response:
        page["Allow"] = response["Allow"]
    return page


@sync_and_async_middleware
def method_not_allowed_middleware(
    get_response: Callable[[HttpRequest], Any],
) -> Callable[[HttpRequest], Any]:
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponse:
            response = await get_response(request)
            if wants_page(request, response):
                # Context processors read the database: render in a thread.
                return await sync_to_async(method_not_allowed_page)(request, response)
            return response

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        response: HttpResponse = get_response(request)
        if wants_page(request, response):
            return method_not_allowed_page(request, response)
        return response

    return middleware
