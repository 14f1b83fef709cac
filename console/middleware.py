"""Shell middleware: a page answering 405 renders in the shell; every request has an id.

The request id (`request_id_middleware`) is a valid incoming `X-Request-ID` or a new one; it is
returned in the response's header, kept in a contextvar for the request's log lines
(`console.log_filters.RequestIdFilter`), carried into the django-q2 tasks the request queues
(`carry_into_task` / `take_from_task`, connected in console.apps) and sent upstream by the
gateway (`gateway.attempt.Call.send_headers`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar
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


# --- Request id -------------------------------------------------------------------------------

REQUEST_ID_HEADER = "X-Request-ID"
# What we accept from a caller (a proxy, a load balancer): short, and nothing a log could misread.
VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{8,128}")
_request_id: ContextVar[str] = ContextVar("payops_request_id", default="")


def current_request_id() -> str:
    """The id of the request (or task) this code runs for; "" outside any."""
    return _request_id.get()


def request_id_use(value: str) -> None:
    """Make `value` the current id (a task taking its request's id; "" for none)."""
    _request_id.set(value)


def _incoming(request: HttpRequest) -> str:
    given = request.headers.get(REQUEST_ID_HEADER, "")
    return given if VALID_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex


@sync_and_async_middleware
def request_id_middleware(
    get_response: Callable[[HttpRequest], Any],
) -> Callable[[HttpRequest], Any]:
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponse:
            _request_id.set(_incoming(request))
            response = await get_response(request)
            response[REQUEST_ID_HEADER] = _request_id.get()
            return response

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        _request_id.set(_incoming(request))
        response = get_response(request)
        response[REQUEST_ID_HEADER] = _request_id.get()
        return response

    return middleware


def request_id_clear(sender: Any, **kwargs: Any) -> None:
    """request_finished: the id stays set until then, so Django's own line about the response
    (django.request's "Not Found: ...", logged after the middlewares) carries it too; under ASGI
    each request runs in its own context anyway, a sync server reuses its thread."""
    _request_id.set("")


def carry_into_task(sender: Any, task: dict[str, Any], **kwargs: Any) -> None:
    """django-q2's pre_enqueue: the task carries the id of the request (or task) queuing it."""
    request_id = current_request_id()
    if request_id:
        task["request_id"] = request_id


def take_from_task(sender: Any, task: dict[str, Any], **kwargs: Any) -> None:
    """django-q2's pre_execute: the worker logs the task under its queuer's id (or none)."""
    request_id_use(str(task.get("request_id") or ""))
