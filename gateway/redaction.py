"""The one redaction function: what of a request or response body may be stored or logged."""

from __future__ import annotations

import json
import re
from typing import Any

REDACTED = "[redacted]"

# Field names (any casing, - or _) whose values are secrets.
_SECRET_KEYS = {
    "password",
    "access_token",
    "refresh_token",
    "token",
    "secret",
    "webhook_secret",
    "api_key",
    "x_api_key",
    "authorization",
    "x_validation_header",
    "otp",
    "otp_code",
    "verification_code",
    "client_secret",
    "file",
}
_JWT = re.compile(r"eyJ[\w-]+\.[\w-]+\.[\w-]*")
_DATA_URI = re.compile(r"data:[\w.+/-]*;base64,[A-Za-z0-9+/=\s]+")


def _norm(key: str) -> str:
    return key.strip().lower().replace("-", "_")


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (REDACTED if _norm(str(k)) in _SECRET_KEYS else _scrub(v)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, str):
        return _DATA_URI.sub("data:[redacted]", _JWT.sub(REDACTED, value))
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
            text = _DATA_URI.sub("data:[redacted]", _JWT.sub(REDACTED, body))
        else:
            text = json.dumps(_scrub(parsed), ensure_ascii=False)
    else:
        text = json.dumps(_scrub(body), ensure_ascii=False, default=str)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…[truncated]"
    return text


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if _norm(k) in _SECRET_KEYS else v) for k, v in headers.items()}
