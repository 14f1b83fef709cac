"""POST /auth: client credentials plus x-api-key in, a bearer JWT out."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

from emulator import clock, tokens
from emulator.auth import api_client_of
from emulator.clients import client_check_password
from emulator.domain.formats import BodyError, raw_json_body
from emulator.errors import EmulatorError, auth_error


def _bad_request(message: str) -> EmulatorError:
    return EmulatorError(400, {"code": "validation_error", "message": message})


def auth_router(environment: str) -> Router:
    router = Router(tags=["auth"])

    @router.post("", auth=None, url_name="auth")
    def authenticate(request: HttpRequest) -> dict[str, Any]:
        client = api_client_of(request)
        if client is None:
            raise auth_error("invalid API key")
        try:
            body = raw_json_body(request)
        except BodyError:
            raise _bad_request("request body must be JSON") from None
        if not isinstance(body, dict):
            raise _bad_request("client_id and password are required")
        for field in ("client_id", "password"):
            if not isinstance(body.get(field), str) or not body[field]:
                raise _bad_request(f"{field} is required")
        # The API key names the client: credentials of another client are as wrong as a bad
        # password, and both get the same answer.
        if body["client_id"].strip().lower() != str(client.client_id) or not (
            client_check_password(client, body["password"])
        ):
            raise auth_error("invalid client ID or password")
        token, ttl = tokens.issue(
            client_id=str(client.client_id), environment=environment, at=clock.now()
        )
        return {
            "message": "Authentication successful",
            "data": {"access_token": token, "expires_in": ttl, "token_type": "Bearer"},
        }

    return router
