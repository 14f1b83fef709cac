"""Permission before body (issue 19 item 4): every operation states its permission once, beside
itself (`@needs`, read into config.api.OPERATION_PERMISSIONS), and the auth step refuses a caller
without it (403) before ninja parses anything, so an invalid body never turns a refusal into a
400."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from config.api import OPERATION_PERMISSIONS, api
from staff.api_tokens import api_token_create, scopes_within_role
from staff.models import StaffUser
from staff.roles import ROLES, TOKEN_SCOPES
from tests.finance import make_environment
from tests.identity import client_signed_in, token_with_scopes

pytestmark = pytest.mark.django_db

PREFIX = "/api/v1"


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    """(METHOD, path relative to /api/v1, the operation's schema) for every operation."""
    found = []
    for path, methods in api.get_openapi_schema()["paths"].items():
        for method, operation in methods.items():
            found.append((method.upper(), path.removeprefix(PREFIX), operation))
    return found


def test_every_operation_states_its_permission() -> None:
    keys = {f"{method} {path}" for method, path, _ in operations()}
    assert keys == set(OPERATION_PERMISSIONS)


def _bad_request(client: Client, method: str, path: str, operation: dict[str, Any]) -> Any:
    """The operation called with an invalid body and invalid query values."""
    url = PREFIX + re.sub(r"\{[^}]+\}", "999999", path) + "?limit=x&offset=x&page=x&page_size=x"
    if method == "GET":
        return client.get(url)
    content = operation.get("requestBody", {}).get("content", {})
    content_type = "multipart/form-data" if "multipart/form-data" in content else "application/json"
    return client.generic(method, url, b'{"not json', content_type=content_type)


def test_a_role_without_the_permission_gets_403_whatever_the_body(
    demo_staff: dict[str, StaffUser],
) -> None:
    make_environment()
    checked = 0
    for role in ROLES:
        user = demo_staff[role.key]
        if user.is_superuser:  # the demo admin may be one: nothing to refuse
            continue
        token = token_with_scopes(user, TOKEN_SCOPES, days=30)  # as stored, even beyond the role
        as_token = Client(headers={"Authorization": f"Bearer {token}"})
        as_session = client_signed_in(user)  # past the sign-in's second factor
        for method, path, operation in operations():
            need = OPERATION_PERMISSIONS[f"{method} {path}"]
            if not need or any(user.has_perm(permission) for permission in need):
                continue
            for client in (as_token, as_session):
                response = _bad_request(client, method, path, operation)
                assert response.status_code == 403, (role.key, method, path, response.content)
                assert response.json()["code"] == "permission_denied"
                checked += 1
    assert checked > 50


def test_a_role_with_the_permission_gets_the_400_of_its_bad_body(
    demo_staff: dict[str, StaffUser],
) -> None:
    """The other half: the same requests do reach parsing when the caller may call them."""
    make_environment()
    maker = demo_staff["finance_maker"]
    token = api_token_create(user=maker, name="t", scopes=scopes_within_role(maker), days=30)
    client = Client(headers={"Authorization": f"Bearer {token.plaintext}"})
    for method, path in (("POST", "/quotes"), ("POST", "/payouts"), ("GET", "/payouts")):
        operation = dict(api.get_openapi_schema()["paths"][PREFIX + path])[method.lower()]
        response = _bad_request(client, method, path, operation)
        assert response.status_code == 400, (method, path, response.content)
        assert response.json()["code"] == "validation_error"


def test_an_operation_that_declares_no_permission_stops_the_start_up() -> None:
    from django.core.exceptions import ImproperlyConfigured
    from ninja import Router

    from config.api import _guard
    from console.api_permissions import needs

    declared, undeclared = Router(), Router()

    @declared.get("/declared")
    @needs("books.view_books")
    def fine(request: Any) -> None: ...

    @undeclared.get("/forgotten")
    def forgotten(request: Any) -> None: ...

    _guard("/test", declared)
    assert OPERATION_PERMISSIONS.pop("GET /test/declared") == ("books.view_books",)
    with pytest.raises(ImproperlyConfigured, match="GET /test/forgotten declares no permission"):
        _guard("/test", undeclared)
