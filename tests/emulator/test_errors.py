"""Error shapes: ninja's own validation errors rendered in each endpoint family's shape."""

import pytest
from django.test import RequestFactory

from emulator.domain.corridors import QUOTE_CURRENCIES
from emulator.errors import family_for_path, validation_error_for


def test_families_by_path():
    assert family_for_path("/v1/quotations") == "quote"
    assert family_for_path("/sandbox/v1/quotations/abc") == "quote"
    assert family_for_path("/sandbox/auth") == "auth"
    assert family_for_path("/v1/users") == "resource"
    assert family_for_path("/_control/faults") == "resource"


def test_quote_family_shape():
    request = RequestFactory().post("/sandbox/v1/quotations")
    missing = {"loc": ("body", "payload", "amount"), "type": "missing", "msg": "Field required"}
    error = validation_error_for(request, [missing])
    assert (error.status, error.body) == (
        400,
        {"error": "amount is required", "valid_quote_currencies": list(QUOTE_CURRENCIES)},
    )


@pytest.mark.django_db(transaction=True)
def test_resource_family_shape_over_http(control):
    response = control.post("/_control/clients", json={})
    assert response.status_code == 400
    assert response.json() == {
        "code": "validation_error",
        "message": "name is required",
        "errors": [{"field": "name", "message": "name is required"}],
    }
    bad = control.post("/_control/faults", json={"error_rate": 2})
    assert bad.status_code == 400
    assert bad.json()["code"] == "validation_error"
    assert bad.json()["errors"][0]["field"] == "error_rate"


@pytest.mark.django_db(transaction=True)
def test_unknown_paths_answer_json_404_with_rate_limit_headers(http, authed, sandbox):
    headers = authed("sandbox")
    responses = [
        http.get("/nope"),
        http.get("/sandbox/v1/nope", headers=headers),
        http.post("/v1/nope", json={}, headers=headers),
        sandbox.get("/v1/users/00000000-0000-0000-0000-000000000000"),
        sandbox.post("/v1/users", {}, **{"idempotency-key": "k"}),
    ]
    for response in responses[:3]:
        assert response.status_code == 404
        assert response.headers["content-type"] == "application/json"
        assert response.json()["code"] == "NOT_FOUND"
    assert [r.status_code for r in responses[3:]] == [404, 400]
    for response in responses:
        for name in ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"):
            assert name in response.headers, (response.status_code, response.text)
        assert "Retry-After" not in response.headers


@pytest.mark.django_db(transaction=True)
async def test_the_root_is_a_landing_page_naming_the_api_docs_and_control_calls(emulator_http):
    response = await emulator_http.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = response.text
    assert "<h1>PayOps upstream emulator</h1>" in page
    for where in ("/docs", "/sandbox/docs", "/sandbox/auth", "/healthz", "X-Emulator-Token"):
        assert where in page, where
    for call in ("/_control/clients", "/_control/mailbox", "/_control/tick", "/_control/events"):
        assert call in page, call
    # Anything else still answers the API's JSON 404, not a page.
    other = await emulator_http.get("/nothing-here")
    assert other.status_code == 404 and other.json()["code"] == "NOT_FOUND"
