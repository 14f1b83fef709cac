"""Finds one client's record by its public UUID in one environment, or raises the documented 404."""

from __future__ import annotations

from typing import Any

from django.db.models import Model

from emulator.domain.formats import parse_uuid
from emulator.errors import resource_error
from emulator.models import ApiClient


def owned_or_404[M: Model](
    model: type[M],
    *,
    id_field: str,
    raw_id: Any,
    client: ApiClient,
    environment: str,
    code: str,
    message: str,
    error_field: str,
) -> M:
    """Another client's or environment's record, and a malformed id, are all simply not found."""
    key = parse_uuid(raw_id)
    found = (
        model._default_manager.filter(
            **{id_field: key}, client=client, environment=environment
        ).first()
        if key
        else None
    )
    if found is None:
        raise resource_error(404, code, message, [(error_field, "not found")])
    return found
