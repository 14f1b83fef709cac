"""URLconf of the emulator process (placeholder until the emulator issue): /healthz only."""

from django.http import HttpRequest, JsonResponse
from django.urls import path


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok", "service": "emulator"})


urlpatterns = [path("healthz", healthz)]
