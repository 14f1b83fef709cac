"""The OpenAPI document is one a parser accepts: no key twice once written as JSON."""

from __future__ import annotations

import json
from typing import Any

from config.api import api


def _repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    assert not repeated, f"keys written twice: {repeated}"
    return dict(pairs)


def test_no_key_is_written_twice() -> None:
    # An `openapi_extra` response keyed "200" beside `response={200: ...}` wrote "200" twice, and
    # Swagger UI showed "duplicated mapping key" instead of the API.
    text = json.dumps(api.get_openapi_schema(), default=str)
    document = json.loads(text, object_pairs_hook=_repeated_keys)
    assert document["paths"]
