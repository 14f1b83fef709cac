"""Redaction: secrets, tokens, OTPs and document contents never reach a log or the call log."""

from __future__ import annotations

import json

from gateway.redaction import REDACTED, redact, redact_headers

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJjbGllbnRfaWQiOiJ4In0.c2lnbmF0dXJl"


def test_secret_fields_at_any_depth() -> None:
    body = {
        "client_id": "c-1",
        "password": "hunter2",
        "data": {"access_token": JWT, "expires_in": 3600},
        "webhook": {"secret": "whsec", "webhook_url": "https://x"},
        "supporting_documents": [
            {"type": "invoice", "file_name": "a.pdf", "file": "data:application/pdf;base64,QUJD"}
        ],
        "x-validation-header": "123456",
    }
    text = redact(body)
    for secret in ("hunter2", JWT, "whsec", "QUJD", "123456"):
        assert secret not in text
    parsed = json.loads(text)
    assert parsed["client_id"] == "c-1"
    assert parsed["data"]["expires_in"] == 3600
    assert parsed["supporting_documents"][0]["file_name"] == "a.pdf"
    assert parsed["password"] == REDACTED


def test_tokens_and_data_uris_inside_free_text() -> None:
    text = redact(f"Bearer {JWT} and data:image/png;base64,AAAABBBB== end")
    assert JWT not in text and "AAAABBBB" not in text


def test_raw_json_string_and_bytes() -> None:
    assert "hunter2" not in redact(b'{"password": "hunter2"}')
    assert "hunter2" not in redact('{"password": "hunter2"}')


def test_truncation() -> None:
    text = redact({"memo": "x" * 500}, limit=50)
    assert len(text) <= 50 + len("…[truncated]") and text.endswith("…[truncated]")


def test_headers() -> None:
    headers = redact_headers(
        {"x-api-key": "k", "Authorization": "Bearer t", "X-Validation-Header": "123456", "A": "b"}
    )
    assert headers == {
        "x-api-key": REDACTED,
        "Authorization": REDACTED,
        "X-Validation-Header": REDACTED,
        "A": "b",
    }
