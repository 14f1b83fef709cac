"""The API never answers 5xx for bad input (issue 19 item 4): each case is a 4xx in the one
error shape, and a sweep of every operation with wrong types, huge numbers and odd text."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from config.api import api
from staff.api_tokens import api_token_create, scopes_within_role
from staff.models import StaffUser
from tests.finance import make_environment

pytestmark = pytest.mark.django_db

PREFIX = "/api/v1"
HUGE = 10**20


def one_shape(response: Any) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"code", "message", "errors"}, body
    return dict(body)


def client_of(user: StaffUser) -> Client:
    # Every scope the person's roles reach (a token is made with no other: issue 30 item 2).
    token = api_token_create(user=user, name="t", scopes=scopes_within_role(user), days=30)
    return Client(headers={"Authorization": f"Bearer {token.plaintext}"})


@pytest.fixture
def maker(demo_staff: dict[str, StaffUser]) -> Client:
    make_environment()
    return client_of(demo_staff["finance_maker"])


def test_multipart_without_a_boundary_is_a_400_on_the_body(maker: Client) -> None:
    response = maker.generic(
        "POST",
        f"{PREFIX}/payouts/1/documents",
        b"--x\r\nContent-Disposition: form-data; name=file\r\n\r\nabc\r\n--x--",
        content_type="multipart/form-data",
    )
    assert response.status_code == 400
    body = one_shape(response)
    assert body["code"] == "validation_error"
    assert body["errors"][0]["field"] == "body"


def test_a_20_mb_json_body_is_413_like_the_receiver(maker: Client) -> None:
    huge = json.dumps({"amount": "1" * (20 * 1024 * 1024)})
    response = maker.post(f"{PREFIX}/quotes", huge, content_type="application/json")
    assert response.status_code == 413
    assert one_shape(response)["code"] == "payload_too_large"


@pytest.mark.parametrize(
    "url",
    [
        "/payouts?offset=100000000000000000000",
        "/quotes?offset=100000000000000000000",
        "/webhooks/events?offset=100000000000000000000",
        "/end-users?page=100000000000000000000",
        "/virtual-accounts?page=100000000000000000000",
        "/recipients?page=100000000000000000000",
        "/webhooks/missed?limit=100000000000000000000",
    ],
)
def test_paging_beyond_its_bounds_is_a_400_on_that_field(
    demo_staff: dict[str, StaffUser], url: str
) -> None:
    make_environment()
    response = client_of(demo_staff["admin"]).get(PREFIX + url)
    if response.status_code == 403:  # the demo admin reads no payouts: a maker does
        response = client_of(demo_staff["finance_maker"]).get(PREFIX + url)
    assert response.status_code == 400, response.content
    body = one_shape(response)
    assert body["errors"][0]["field"] in {"offset", "page", "limit"}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/webhooks/events/abc"),
        ("POST", "/webhooks/events/abc/reprocess"),
        ("POST", "/webhooks/endpoints/abc/register"),
        ("POST", "/webhooks/endpoints/abc/rotate"),
        ("GET", "/webhooks/runs/abc"),
    ],
)
def test_webhook_ids_are_typed_so_a_bad_one_is_json(
    demo_staff: dict[str, StaffUser], method: str, path: str
) -> None:
    response = client_of(demo_staff["admin"]).generic(method, PREFIX + path)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert one_shape(response)["errors"][0]["field"] in {"event_pk", "environment_id", "run_pk"}


def test_a_nul_in_a_query_parameter_is_a_400_on_it(maker: Client) -> None:
    """PostgreSQL refuses NUL in any filter: it must never reach one."""
    response = maker.get(f"{PREFIX}/quotes", {"status": "a\x00b"})
    assert response.status_code == 400
    assert one_shape(response)["errors"] == [
        {"field": "status", "message": "must not contain NUL characters"}
    ]


ODD_TEXT = "\u0661\u0660 \u202e\x00\U0001f4a5" + "\u00e9" * 300
BAD_VALUES: list[Any] = [[1, 2], HUGE, -HUGE, "1e999999", ODD_TEXT, {"nested": None}, None]


def _bodies(operation: dict[str, Any], components: dict[str, Any]) -> list[Any]:
    content = operation.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema")
    if schema is None:
        return []
    ref = schema.get("$ref", "")
    properties = components.get(ref.rsplit("/", 1)[-1], {}).get("properties", {})
    bodies: list[Any] = [{}, [], "x", HUGE]
    for value in BAD_VALUES:
        bodies.append(dict.fromkeys(properties, value))
    return bodies


def test_no_operation_answers_5xx_to_bad_input(demo_staff: dict[str, StaffUser]) -> None:
    make_environment()
    root = StaffUser.objects.create_superuser("root@payops.test", "pw-not-secret-123")
    client = client_of(root)
    schema = api.get_openapi_schema()
    components = schema["components"]["schemas"]
    sent = 0
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            for pk in ("1", str(HUGE), "-1"):
                url = re.sub(r"\{[^}]+\}", pk, path)
                for body in _bodies(operation, components) or [None]:
                    if method == "get":
                        response = client.get(url, {"q": ODD_TEXT, "status": ODD_TEXT})
                    else:
                        data = b"" if body is None else json.dumps(body)
                        response = client.generic(
                            method.upper(), url, data, content_type="application/json"
                        )
                    sent += 1
                    # 502/503 are the (offline) upstream's answer, not a fault of ours.
                    upstream = response.status_code in (502, 503)
                    assert response.status_code < 500 or upstream, (method, url, body, response)
                    if response.status_code >= 400:
                        assert one_shape(response)["code"] != "server_error"
    assert sent > 200
