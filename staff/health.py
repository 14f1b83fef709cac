"""Liveness (/healthz) and readiness (/readyz) probes (placeholder)."""

from django.http import HttpRequest, JsonResponse


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok", "checks": {}})
