"""The one redaction policy: which keys are secrets, how a body is scrubbed, how a secret is masked.

The audit trail (staff.audit.audit_record) and the gateway's call log both apply it, so a
secret left out of one is never kept by the other. It lives in staff because staff depends on no
other project app: anything may import it without a cycle.
"""

from __future__ import annotations

import json
import re
from typing import Any

REDACTED = "[redacted]"

# A key is secret when, lower-cased with "-" read as "_", it contains one of these words...
_SECRET_WORDS = (
    "password",
    "secret",  # client_secret, webhook_secret
    "token",  # access_token, refresh_token
    "api_key",  # x-api-key
    "apikey",
    "authorization",
    "otp",  # otp, otp_code
)
# ...or is one of these exactly (a document's contents; the upstream's header check; OTP codes).
_SECRET_KEYS = {"file", "x_validation_header", "verification_code"}
_JWT = re.compile(r"eyJ[\w-]+\.[\w-]+\.[\w-]*")
_DATA_URI = re.compile(r"data:[\w.+/-]*;base64,[A-Za-z0-9+/=\s]+")


def _norm(key: str) -> str:
    return key.strip().lower().replace("-", "_")


def is_secret_key(key: object) -> bool:
    """Whether values under this key (a JSON field or an HTTP header name) must never be kept."""
    name = _norm(str(key))
    if name in _SECRET_KEYS:
        return True
    words = name.split("_")
    for marker in _SECRET_WORDS:
        parts = marker.split("_")
        # Whole words only: "otp" hides otp_code, not "footprint".
        if any(words[i : i + len(parts)] == parts for i in range(len(words) - len(parts) + 1)):
            return True
    return False


def _scrub_text(text: str) -> str:
    return _DATA_URI.sub("data:[redacted]", _JWT.sub(REDACTED, text))


def scrub(value: Any) -> Any:
    """The same structure with every secret-keyed value, token and document content replaced."""
    if isinstance(value, dict):
        return {k: (REDACTED if is_secret_key(k) else scrub(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return _scrub_text(value)
    return value


def redact(body: Any, *, limit: int | None = None) -> str:
    """
    A body (parsed JSON, raw text or bytes) as a string safe to store: secret fields, tokens,
    OTPs and document contents replaced, then cut to `limit` characters.
    """
    if body is None or body == b"" or body == "":
        return ""
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    if isinstance(body, str):
        try:
            parsed = json.loads(body)
        except ValueError:
            text = _scrub_text(body)
        else:
            text = json.dumps(scrub(parsed), ensure_ascii=False)
    else:
        text = json.dumps(scrub(body), ensure_ascii=False, default=str)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…[truncated]"
    return text


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if is_secret_key(k) else v) for k, v in headers.items()}


def mask(secret: str, *, visible: int = 4) -> str:
    """What a person may see of a secret: its last few characters at most (none if it is short)."""
    if not secret:
        return ""
    if len(secret) <= visible * 2:
        return "•" * 8
    return "•" * 8 + secret[-visible:]
