"""JSON bodies read by hand where the upstream's own messages must be reproduced exactly."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django.http import HttpRequest


class BodyError(ValueError):
    """The body is not JSON."""


def json_body(request: HttpRequest) -> Any:
    """The parsed body, numbers with a fraction as Decimal (money never goes through float)."""
    if not request.body:
        return None
    try:
        return json.loads(request.body, parse_float=Decimal)
    except ValueError as exc:
        raise BodyError("request body is not valid JSON") from exc
