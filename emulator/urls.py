"""URLconf of the emulator process: production API at the root, sandbox under /sandbox, control."""

from django.http import HttpRequest, JsonResponse
from django.urls import path

from emulator.api import control_api, production_api, sandbox_api


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok", "service": "emulator"})


urlpatterns = [
    path("healthz", healthz),
    path("_control/", control_api.urls),
    path("sandbox/", sandbox_api.urls),
    path("", production_api.urls),
]
