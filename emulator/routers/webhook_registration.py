"""/webhooks/register: where the client's events go and the secret that signs them."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from ninja import Router

from emulator.auth import token_auth
from emulator.domain.formats import json_body
from emulator.domain.webhooks import webhook_register
from emulator.routers.respond import caller, respond
from emulator.routers.schemas import WebhookRegisterBody, body_doc


def webhooks_router(environment: str) -> Router:
    router = Router(tags=["webhooks"], auth=token_auth(environment))

    @router.post(
        "/register", url_name="webhooks-register", openapi_extra=body_doc(WebhookRegisterBody)
    )
    def register(request: HttpRequest) -> JsonResponse:
        webhook_register(client=caller(request), environment=environment, body=json_body(request))
        return respond(200, {"message": "Webhook registered successfully"})

    return router
