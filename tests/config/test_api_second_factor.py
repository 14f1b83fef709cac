"""A password alone reaches no API operation (issue 30 item 1): a session counts for the API only
once its sign-in is complete (staff.second_factor.state), whatever Authorization header comes with
it, and a header that is not a valid bearer token is 401, never a fall-back to the session."""

from __future__ import annotations

import re

import pytest

from config.api import OPERATION_PERMISSIONS, api
from staff.api_tokens import api_token_create
from staff.models import StaffUser
from staff.roles import TOKEN_SCOPES, roles_sync
from tests.identity import client_signed_in, enrolled
from tests.staff.second_factor_support import password_signed_in, person

pytestmark = pytest.mark.django_db

PREFIX = "/api/v1"
JUNK_HEADERS = ("Basic eDp5", "Bearer junk", "Bearer payops_not-a-token", "Bearer", "")
# Operations anyone may call without a signed-in person, with the reason. None today.
PUBLIC_OPERATIONS: dict[str, str] = {}
# The OpenAPI document and its page are not operations of the document, but read like one.
DOCS = (("GET", "/openapi.json"), ("GET", "/docs"))


def every_operation() -> list[tuple[str, str]]:
    """(METHOD, URL) of every operation of the OpenAPI document, path parameters filled."""
    found = []
    for path, methods in api.get_openapi_schema()["paths"].items():
        for method in methods:
            key = f"{method.upper()} {path.removeprefix(PREFIX)}"
            if key in PUBLIC_OPERATIONS:
                continue
            found.append((method.upper(), re.sub(r"\{[^}]+\}", "1", path)))
    found.extend((method, PREFIX + path) for method, path in DOCS)
    return found


@pytest.fixture
def admin_at_second_step() -> StaffUser:
    """An admin (superuser: every permission) with an authenticator app, past the password only."""
    roles_sync()
    user = person("admin-password-only@example.test", "admin", superuser=True)
    enrolled(user)
    return user


def test_every_operation_states_whether_it_is_public() -> None:
    keys = {
        f"{method.upper()} {path.removeprefix(PREFIX)}"
        for path, methods in api.get_openapi_schema()["paths"].items()
        for method in methods
    }
    assert set(PUBLIC_OPERATIONS) <= keys
    walked = len(OPERATION_PERMISSIONS) - len(PUBLIC_OPERATIONS) + len(DOCS)
    assert len(every_operation()) == walked


def test_a_password_only_session_reaches_no_operation(admin_at_second_step: StaffUser) -> None:
    client = password_signed_in(admin_at_second_step)
    for method, url in every_operation():
        response = client.generic(method, url)
        assert response.status_code == 401, (method, url, response.status_code)
        assert response.json()["code"] == "second_factor_required", (method, url)


@pytest.mark.parametrize("header", JUNK_HEADERS)
def test_a_password_only_session_with_any_authorization_header_reaches_no_operation(
    admin_at_second_step: StaffUser, header: str
) -> None:
    client = password_signed_in(admin_at_second_step)
    for method, url in every_operation():
        response = client.generic(method, url, headers={"Authorization": header})
        assert response.status_code == 401, (header, method, url, response.status_code)
        assert response.json()["code"] == "unauthorized", (header, method, url)


@pytest.mark.parametrize("header", JUNK_HEADERS)
def test_a_bad_token_never_falls_back_to_a_complete_session(
    admin_at_second_step: StaffUser, header: str
) -> None:
    """Even a fully signed-in session is not used when the request sends another credential."""
    client = client_signed_in(admin_at_second_step)
    assert client.get(f"{PREFIX}/me").status_code == 200
    response = client.get(f"{PREFIX}/me", headers={"Authorization": header})
    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized"


def test_expired_and_revoked_tokens_are_401_beside_a_password_only_session(
    admin_at_second_step: StaffUser,
) -> None:
    client = password_signed_in(admin_at_second_step)
    new = api_token_create(user=admin_at_second_step, name="t", scopes=("read",), days=7)
    bearer = {"Authorization": f"Bearer {new.plaintext}"}
    assert client.get(f"{PREFIX}/me", headers=bearer).status_code == 200  # the token acts
    type(new.token).objects.filter(pk=new.token.pk).update(expires_at=new.token.created_at)
    assert client.get(f"{PREFIX}/me", headers=bearer).status_code == 401
    revoked = api_token_create(user=admin_at_second_step, name="r", scopes=("read",), days=7)
    type(revoked.token).objects.filter(pk=revoked.token.pk).update(
        revoked_at=revoked.token.created_at
    )
    response = client.get(f"{PREFIX}/me", headers={"Authorization": f"Bearer {revoked.plaintext}"})
    assert response.status_code == 401


def test_a_person_whose_role_needs_no_second_factor_is_signed_in_by_the_password() -> None:
    """The other half of the rule: no device and no role requiring one is a complete sign-in."""
    roles_sync()
    maker = person("maker-password@example.test", "finance_maker")
    client = password_signed_in(maker)
    assert client.get(f"{PREFIX}/me").status_code == 200
    assert client.get(f"{PREFIX}/me", headers={"Authorization": "Basic eDp5"}).status_code == 401
    assert TOKEN_SCOPES  # the scopes exist (a token is the way to send a header)


def test_the_api_refuses_a_password_only_session_without_the_pages_gate(
    admin_at_second_step: StaffUser, settings: object
) -> None:
    """The API's own session auth holds the rule, not only the middleware in front of it."""
    gate = "staff.second_factor.gate.second_factor_gate"
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != gate]  # type: ignore[attr-defined]
    client = password_signed_in(admin_at_second_step)
    for method, url in every_operation():
        response = client.generic(method, url)
        assert response.status_code == 401, (method, url, response.status_code)
        assert response.json()["code"] == "second_factor_required", (method, url)
