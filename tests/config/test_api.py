"""The /api/v1 NinjaAPI: /me for logged-in staff, OpenAPI docs for staff only."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_me_returns_the_logged_in_staff_member_and_roles(client, maker) -> None:
    client.force_login(maker)

    response = client.get("/api/v1/me")

    assert response.status_code == 200
    assert response.json() == {
        "email": "maker-ops@example.test",
        "full_name": "",
        "roles": ["finance_maker"],
        "token_scopes": None,
        "token_expires_at": None,
        "language": "",
    }


def test_me_refuses_anonymous_requests(client) -> None:
    assert client.get("/api/v1/me").status_code == 401


def test_docs_redirect_anonymous_users_to_the_login_page(client) -> None:
    response = client.get("/api/v1/docs")

    assert response.status_code == 302
    assert response["Location"].startswith("/login")
    assert "next=/api/v1/docs" in response["Location"]


def test_docs_and_schema_are_refused_to_users_without_a_role(client, roleless) -> None:
    client.force_login(roleless)

    assert client.get("/api/v1/docs").status_code == 403
    assert client.get("/api/v1/openapi.json").status_code == 403


def test_docs_and_schema_are_served_to_staff(client, maker) -> None:
    client.force_login(maker)

    assert client.get("/api/v1/docs").status_code == 200
    schema = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/me" in schema["paths"]


@pytest.mark.parametrize(
    ("language", "invalid", "unauthorized"),
    [
        ("en", "The request has invalid fields.", "Send a valid personal API token"),
        ("es", "La solicitud tiene campos no válidos.", "Envíe un token de API personal válido"),
        ("pt-br", "A solicitação tem campos inválidos.", "Envie um token de API pessoal válido"),
    ],
)
def test_the_apis_own_errors_speak_the_callers_language_and_keep_their_codes(
    client, maker, language: str, invalid: str, unauthorized: str
) -> None:
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = language
    anonymous = client.get("/api/v1/me")
    assert anonymous.status_code == 401
    assert anonymous.json()["code"] == "unauthorized"
    assert anonymous.json()["message"].startswith(unauthorized)

    client.force_login(maker)
    bad = client.put("/api/v1/me/language", data="[1]", content_type="application/json")

    assert bad.status_code == 400
    assert bad.json()["code"] == "validation_error"
    assert bad.json()["message"] == invalid
