"""Authentication of emulator API calls: x-api-key, then a bearer JWT valid for this environment."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from emulator import clock, tokens
from emulator.clients import client_by_api_key
from emulator.edge import CLIENT_SCOPE_KEY
from emulator.errors import auth_error, token_expired
from emulator.models import ApiClient


class TokenAuth:
    """ninja auth callable; `request.auth` becomes the `ApiClient`. One instance per environment."""

    def __init__(self, environment: str) -> None:
        self.environment = environment

    def __call__(self, request: HttpRequest) -> ApiClient:
        return authenticate(request, self.environment)


def api_client_of(request: HttpRequest) -> ApiClient | None:
    # The edge (emulator.edge) already looked the key up for the limits; reuse its answer.
    scope = getattr(request, "scope", None) or {}
    if CLIENT_SCOPE_KEY in scope:
        client: ApiClient | None = scope[CLIENT_SCOPE_KEY]
        return client
    return client_by_api_key(request.headers.get("x-api-key"))


def authenticate(request: HttpRequest, environment: str) -> ApiClient:
    """Checks, in the documented order, and raises the documented 401 at the first failure."""
    client = api_client_of(request)
    if client is None:
        raise auth_error("invalid API key")
    header = request.headers.get("authorization", "")
    if not header.strip():
        raise auth_error("no authorization token provided")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise auth_error("invalid authorization token")
    try:
        claims: dict[str, Any] = tokens.decode(token.strip())
    except tokens.InvalidToken:
        raise auth_error("invalid authorization token") from None
    exp = claims.get("exp")
    if not isinstance(exp, int | float) or clock.now().timestamp() >= exp:
        raise token_expired()
    if claims.get("env") != environment:
        raise auth_error(f"token was not issued for the {environment} environment")
    client_id = claims.get("client_id")
    if not client_id:
        raise auth_error("no client ID found in claims")
    if str(client_id) != str(client.client_id):
        raise auth_error("token does not belong to this API key")
    return client


def token_auth(environment: str) -> TokenAuth:
    """What every router except /auth passes as `auth=`."""
    return TokenAuth(environment)
