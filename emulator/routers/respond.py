"""Small helpers of the domain routers: JSON answers with a status, the caller's client."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse

from emulator.models import ApiClient


def respond(status: int, body: dict[str, Any]) -> JsonResponse:
    return JsonResponse(body, status=status, json_dumps_params={"ensure_ascii": False})


def caller(request: HttpRequest) -> ApiClient:
    client: ApiClient = request.auth  # type: ignore[attr-defined]
    return client
