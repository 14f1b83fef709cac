"""/verification/send: a 6-digit OTP for fiat payouts, delivered to the emulator's mailbox."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from ninja import Router

from emulator.auth import token_auth
from emulator.domain.formats import json_body
from emulator.domain.otp import otp_send
from emulator.routers.respond import caller, respond
from emulator.routers.schemas import OtpSendBody, body_doc


def verification_router(environment: str) -> Router:
    router = Router(tags=["verification"], auth=token_auth(environment))

    @router.post("/send", url_name="verification-send", openapi_extra=body_doc(OtpSendBody))
    def send(request: HttpRequest) -> JsonResponse:
        body = json_body(request)
        result = otp_send(client=caller(request), environment=environment, email=body.get("email"))
        return respond(200, result)

    return router
