"""URLconf of the emulator process: production API at the root, sandbox under /sandbox, control."""

from django.http import HttpRequest, JsonResponse
from django.urls import path, re_path
from django.views.decorators.csrf import csrf_exempt

from emulator.api import control_api, production_api, sandbox_api


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok", "service": "emulator"})


@csrf_exempt
def not_found(request: HttpRequest) -> JsonResponse:
    """An API answers an unknown path in JSON (not Django's HTML page), in the resource shape."""
    return JsonResponse(
        {"code": "NOT_FOUND", "message": f"No route for {request.method} {request.path}"},
        status=404,
    )


urlpatterns = [
    path("healthz", healthz),
    path("_control/", control_api.urls),
    path("sandbox/", sandbox_api.urls),
    path("", production_api.urls),
    re_path(r"^", not_found),
]
