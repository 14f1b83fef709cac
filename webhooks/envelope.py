"""The receiver's JSON envelope check: what a delivery must hold before its event is stored."""

from __future__ import annotations

import json
from typing import Any


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError("number out of range")
    return value


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return chr(0) in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


def envelope_parse(body: bytes) -> tuple[dict[str, Any] | None, str]:
    """The parsed envelope, or None and why it is refused.

    Stricter than Python's json module where the database would otherwise fail later (a 5xx for
    bad input): NaN/Infinity, numbers beyond a double, NUL characters and lone surrogates (which
    PostgreSQL's jsonb refuses) and nesting deep enough to exhaust recursion are all a 400.
    """
    try:
        parsed = json.loads(body, parse_constant=_no_constant, parse_float=_finite)
        text = json.dumps(parsed, ensure_ascii=False)
        text.encode("utf-8")  # lone surrogates cannot be stored
    except (ValueError, RecursionError):
        return None, "body is not valid JSON (or holds values that cannot be stored)"
    if _holds_nul(parsed):
        return None, "body holds NUL characters"
    if not isinstance(parsed, dict):
        return None, "body is not a JSON object"
    event_type, data = parsed.get("event"), parsed.get("data")
    if not isinstance(event_type, str) or not event_type or len(event_type) > 100:
        return None, "`event` must be a non-empty string"
    if not isinstance(data, dict):
        return None, "`data` must be an object"
    event_id = data.get("event_id")
    if not isinstance(event_id, str) or not event_id or len(event_id) > 100:
        return None, "`data.event_id` must be a non-empty string"
    return parsed, ""
