"""Routes requests that arrive through the emulator's ASGI application to the emulator's URLconf."""

from collections.abc import Awaitable, Callable
from inspect import iscoroutinefunction
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.decorators import sync_and_async_middleware

# The emulator's ASGI wrapper (emulator.asgi) marks its requests with this scope key.
EMULATOR_SCOPE_KEY = "payops.emulator"


def _mark(request: HttpRequest) -> None:
    scope = getattr(request, "scope", None)
    if scope is not None and scope.get(EMULATOR_SCOPE_KEY):
        request.urlconf = "emulator.urls"


@sync_and_async_middleware
def EmulatorURLConfMiddleware(get_response: Callable[[HttpRequest], Any]) -> Any:
    """One code base serves two applications: the back office and the upstream emulator."""
    if iscoroutinefunction(get_response):
        async_get_response: Callable[[HttpRequest], Awaitable[HttpResponse]] = get_response

        async def middleware(request: HttpRequest) -> HttpResponse:
            _mark(request)
            return await async_get_response(request)

        return middleware

    def sync_middleware(request: HttpRequest) -> HttpResponse:
        _mark(request)
        response: HttpResponse = get_response(request)
        return response

    return sync_middleware
