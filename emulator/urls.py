"""URLconf of the emulator process: production API at the root, sandbox under /sandbox, control."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import path, re_path
from django.views.decorators.csrf import csrf_exempt

from emulator.api import control_api, production_api, sandbox_api


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok", "service": "emulator"})


# decisions.md section 6, in the order a newcomer meets them.
CONTROL_CALLS = (
    ("POST /_control/clients", "a new API client: client_id, password, api_key"),
    ("GET /_control/mailbox?email=", "messages sent to that address (OTP codes), newest first"),
    ("GET, POST /_control/clock", "the emulator's clock; advance_seconds moves it forward"),
    ("GET, POST, DELETE /_control/faults", "latency, error and 429 rates, dropped webhooks"),
    ("POST /_control/deposits", "a simulated incoming deposit to a virtual account"),
    ("POST /_control/users/{user_id}/decision", "accepts or rejects a user under review"),
    ("POST /_control/tick", "runs every due state transition now"),
    ("POST /_control/webhooks/flush", "delivers every queued webhook now"),
    ("GET /_control/webhooks/deliveries", "every delivery attempt"),
    ("POST /_control/payouts/{payout_id}/deposit", "a crypto payout's stablecoin deposit"),
    ("POST /_control/events", "signs and queues an event no API call produces"),
)


def landing(request: HttpRequest) -> HttpResponse:
    """The root: what this is and where the API, its docs and the control calls are."""
    context = {"base": request.build_absolute_uri("/").rstrip("/"), "control_calls": CONTROL_CALLS}
    return render(request, "emulator/landing.html", context)


@csrf_exempt
def not_found(request: HttpRequest) -> JsonResponse:
    """An API answers an unknown path in JSON (not Django's HTML page), in the resource shape."""
    return JsonResponse(
        {"code": "NOT_FOUND", "message": f"No route for {request.method} {request.path}"},
        status=404,
    )


urlpatterns = [
    path("", landing, name="emulator-landing"),
    path("healthz", healthz),
    path("_control/", control_api.urls),
    path("sandbox/", sandbox_api.urls),
    path("", production_api.urls),
    re_path(r"^", not_found),
]
