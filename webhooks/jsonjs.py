"""JSON text exactly as JavaScript's `JSON.parse` then `JSON.stringify` would give it back."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

# JSON.parse turns every number into an IEEE double; integers beyond 2**53 lose digits there.
_EXACT_INT_LIMIT = 2**53
# Lone UTF-16 surrogates (from "\ud800" escapes): well-formed JSON.stringify (ES2019) escapes them.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# An "array index" key: JS objects list these first, in ascending numeric order.
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")
_MAX_ARRAY_INDEX = 2**32 - 2


def js_number(value: int | float) -> str:
    """Number.prototype.toString of the double nearest to value (ECMA-262 Number::toString)."""
    if isinstance(value, bool):  # pragma: no cover - callers route booleans elsewhere
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) < _EXACT_INT_LIMIT:
        return str(value)
    try:
        number = float(value)
    except OverflowError:
        return "null"
    if math.isnan(number) or math.isinf(number):
        return "null"  # JSON.stringify(Infinity) and NaN give null
    if number == 0:
        return "0"  # -0 too
    sign = "-" if number < 0 else ""
    # repr() is the shortest text that reads back as the same double, as JS requires.
    exact = Decimal(repr(abs(number))).as_tuple()
    digit_list, exponent_10 = list(exact.digits), int(exact.exponent)
    while len(digit_list) > 1 and digit_list[-1] == 0:
        digit_list.pop()
        exponent_10 += 1
    digits = "".join(map(str, digit_list))
    # ECMA-262: value = digits * 10**(n - k), k the number of digits.
    k = len(digits)
    n = exponent_10 + k
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        exponent = n - 1
        exp_sign = "+" if exponent >= 0 else "-"
        head = digits[0] + ("." + digits[1:] if k > 1 else "")
        text = f"{head}e{exp_sign}{abs(exponent)}"
    return sign + text


def _js_string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _js_key_order(keys: list[str]) -> list[str]:
    indexes = [key for key in keys if _ARRAY_INDEX.fullmatch(key) and int(key) <= _MAX_ARRAY_INDEX]
    if not indexes:
        return keys
    index_set = set(indexes)
    return sorted(indexes, key=int) + [key for key in keys if key not in index_set]


def _write(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_js_string(value))
    elif isinstance(value, int | float):
        out.append(js_number(value))
    elif isinstance(value, list):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        for index, key in enumerate(_js_key_order(list(value))):
            if index:
                out.append(",")
            out.append(_js_string(key))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


def js_stringify(value: Any) -> str:
    """`JSON.stringify(value)` for a value `json.loads` produced (no spaces, no `.0`)."""
    out: list[str] = []
    _write(value, out)
    return "".join(out)


def js_reserialise(raw: bytes) -> bytes:
    """What a JavaScript receiver signs after parsing: `JSON.stringify(JSON.parse(raw))`, UTF-8.

    Raises ValueError (json.JSONDecodeError, UnicodeDecodeError) for a body that is not JSON.
    """
    parsed = json.loads(raw)
    # A lone surrogate cannot be encoded as UTF-8; JS escapes it, and so does _js_string.
    return js_stringify(parsed).encode("utf-8")
