"""Every documented upstream error shape becomes the right typed exception."""

from __future__ import annotations

import json

import pytest

from gateway.errors import (
    AuthenticationError,
    FieldProblem,
    NotFoundError,
    PermanentError,
    RateLimited,
    ServerError,
    TemporaryError,
    ValidationError,
    error_from_response,
)


def test_auth_shape_code_and_message() -> None:
    error = error_from_response(
        401, json.dumps({"code": "unauthorized", "message": "invalid API key"})
    )
    assert isinstance(error, AuthenticationError)
    assert (error.status, error.code, error.message) == (401, "unauthorized", "invalid API key")
    assert not error.retryable


def test_expired_token_message_only() -> None:
    error = error_from_response(401, '{"message": "token has expired"}')
    assert isinstance(error, AuthenticationError)
    assert error.code == "" and error.message == "token has expired"


def test_quotation_validation_with_valid_lists() -> None:
    body = {"error": "quote_currency is required", "valid_quote_currencies": ["MXN", "COP"]}
    error = error_from_response(400, json.dumps(body))
    assert isinstance(error, ValidationError)
    assert error.message == "quote_currency is required"
    assert error.details == {"valid_quote_currencies": ["MXN", "COP"]}


def test_quotation_coded_error_with_details() -> None:
    body = {
        "error": {
            "code": "FEES_EXCEED_AMOUNT",
            "message": "fees exceed the amount",
            "details": {"amount": 1, "total_fees": 3.5},
        }
    }
    error = error_from_response(409, json.dumps(body))
    assert isinstance(error, ValidationError)
    assert error.code == "FEES_EXCEED_AMOUNT"
    assert error.details == {"amount": 1, "total_fees": 3.5}


def test_quote_not_found_is_not_found() -> None:
    body = {"error": {"code": "QUOTE_NOT_FOUND", "message": "quote not found"}}
    error = error_from_response(404, json.dumps(body))
    assert isinstance(error, NotFoundError) and error.code == "QUOTE_NOT_FOUND"


def test_resource_errors_become_field_errors() -> None:
    body = {
        "code": "validation_error",
        "message": "invalid request",
        "errors": [
            {"field": "amount", "message": "must be greater than 0"},
            {"field": "amount", "message": "at most 2 decimals"},
            {"field": "recipient_id", "message": "required"},
        ],
    }
    error = error_from_response(400, json.dumps(body))
    assert error.field_errors[0] == FieldProblem("amount", "must be greater than 0")
    assert error.form_errors() == {
        "amount": ["must be greater than 0", "at most 2 decimals"],
        "recipient_id": ["required"],
    }


def test_idempotency_reuse_conflict() -> None:
    body = {"error": {"code": "IDEMPOTENCY_KEY_REUSED", "message": "different body"}}
    error = error_from_response(409, json.dumps(body))
    assert isinstance(error, PermanentError) and error.code == "IDEMPOTENCY_KEY_REUSED"


def test_gateway_html_page_is_a_temporary_server_error() -> None:
    html = "<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>"
    error = error_from_response(502, html)
    assert isinstance(error, ServerError) and error.retryable
    assert "502 Bad Gateway" in error.message
    assert len(error.message) <= 200


def test_forbidden_message_is_an_authentication_error() -> None:
    error = error_from_response(403, '{"message": "Forbidden"}')
    assert isinstance(error, AuthenticationError) and error.message == "Forbidden"


def test_coded_403_of_another_clients_object_is_not_found() -> None:
    error = error_from_response(403, '{"code": "forbidden", "message": "not your payout"}')
    assert isinstance(error, NotFoundError)


def test_429_keeps_retry_after() -> None:
    error = error_from_response(429, "", retry_after=3)
    assert isinstance(error, RateLimited) and isinstance(error, TemporaryError)
    assert error.retry_after == 3 and error.code == "rate_limited"


@pytest.mark.parametrize("body", ["", "null", "[1, 2]", "not json at all"])
def test_odd_bodies_never_crash(body: str) -> None:
    error = error_from_response(500, body)
    assert isinstance(error, ServerError) and error.message
