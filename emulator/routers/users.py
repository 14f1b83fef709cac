"""/v1/users: create (idempotent, 201), update only the fields sent, read."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from ninja import Router

from emulator.auth import token_auth
from emulator.domain.formats import json_body
from emulator.domain.users import user_create, user_get, user_payload, user_update
from emulator.idempotency import idempotent
from emulator.routers.respond import caller, respond
from emulator.routers.schemas import UserCreateBody, UserUpdateBody, body_doc


def users_router(environment: str) -> Router:
    router = Router(tags=["users"], auth=token_auth(environment))

    @router.post("", url_name="users", openapi_extra=body_doc(UserCreateBody))
    def create(request: HttpRequest) -> JsonResponse:
        client = caller(request)

        def handler() -> tuple[int, dict]:
            user = user_create(client=client, environment=environment, body=json_body(request))
            return 201, {"data": user_payload(user)}

        status, body = idempotent(
            request, client=client, environment=environment, scope="users:create", handler=handler
        )
        return respond(status, body)

    @router.put("/{user_id}", url_name="user-update", openapi_extra=body_doc(UserUpdateBody))
    def update(request: HttpRequest, user_id: str) -> JsonResponse:
        client = caller(request)
        user = user_update(
            client=client, environment=environment, user_id=user_id, body=json_body(request)
        )
        return respond(200, {"data": user_payload(user)})

    @router.get("/{user_id}", url_name="user")
    def read(request: HttpRequest, user_id: str) -> JsonResponse:
        user = user_get(client=caller(request), environment=environment, user_id=user_id)
        return respond(200, {"data": user_payload(user)})

    return router
