"""One redaction policy: no secret, token, OTP or document reaches the audit trail or call log."""

from __future__ import annotations

import json

import pytest

from staff.audit import audit_record
from staff.models import AuditEntry
from staff.redaction import REDACTED, is_secret_key, mask, redact, redact_headers

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


SECRET_KEYS = [
    "password",
    "client_secret",
    "webhook_secret",
    "access_token",
    "refresh_token",
    "api_key",
    "X-Api-Key",
    "apiKey",
    "Authorization",
    "otp",
    "otp_code",
    "verification_code",
    "x-validation-header",
    "file",
]
PLAIN_KEYS = ["client_id", "name", "footprint", "file_name", "amount", "expires_in"]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_the_audit_trail_and_the_call_log_hide_the_same_keys(key: str, db: None) -> None:
    entry = audit_record(actor=None, action="tests.redaction", details={"nested": {key: "s3cr3t"}})
    entry.refresh_from_db()

    assert AuditEntry.objects.get(pk=entry.pk).details == {"nested": {key: REDACTED}}
    assert json.loads(redact({"nested": {key: "s3cr3t"}})) == {"nested": {key: REDACTED}}


@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_keys_that_only_contain_a_marker_inside_a_word_are_kept(key: str) -> None:
    assert not is_secret_key(key)


def test_the_audit_trail_also_hides_tokens_inside_free_text(db: None) -> None:
    entry = audit_record(actor=None, action="tests.redaction", details={"note": f"got {JWT}"})
    entry.refresh_from_db()

    assert entry.details == {"note": f"got {REDACTED}"}


def test_mask_shows_at_most_the_last_four_characters() -> None:
    assert mask("sk_test_0123456789") == "••••••••6789"
    assert mask("short") == "••••••••"  # too short to show any of it
    assert mask("") == ""
