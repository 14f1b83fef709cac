"""/v1/recipients: create (201), list by user, read."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from ninja import Router

from emulator.auth import token_auth
from emulator.domain.formats import json_body
from emulator.domain.recipients import recipient_create, recipient_get, recipient_payload
from emulator.domain.selectors import recipients_of
from emulator.routers.respond import caller, respond
from emulator.routers.schemas import RecipientBody, body_doc


def recipients_router(environment: str) -> Router:
    router = Router(tags=["recipients"], auth=token_auth(environment))

    @router.post("", url_name="recipients", openapi_extra=body_doc(RecipientBody))
    def create(request: HttpRequest) -> JsonResponse:
        recipient = recipient_create(
            client=caller(request), environment=environment, body=json_body(request)
        )
        return respond(201, {"data": recipient_payload(recipient)})

    @router.get("", url_name="recipients-list")
    def listing(request: HttpRequest) -> JsonResponse:
        recipients = recipients_of(
            client=caller(request), environment=environment, user_id=request.GET.get("user_id")
        )
        items = [recipient_payload(item) for item in recipients]
        return respond(200, {"recipients": items, "total": len(items)})

    @router.get("/{recipient_id}", url_name="recipient")
    def read(request: HttpRequest, recipient_id: str) -> JsonResponse:
        recipient = recipient_get(
            client=caller(request), environment=environment, recipient_id=recipient_id
        )
        return respond(200, {"data": recipient_payload(recipient)})

    return router
