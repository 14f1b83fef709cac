"""/v1/quotations: create (201), read and update the amount of a quote."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Status

from emulator.auth import token_auth
from emulator.domain.formats import BodyError, raw_json_body
from emulator.domain.quotations import (
    invalid_quote_request,
    parse_amount,
    quote_create,
    quote_get,
    quote_json,
    quote_update_amount,
    validate_quote_request,
)
from emulator.models import ApiClient


def _body(request: HttpRequest) -> Any:
    try:
        return raw_json_body(request)
    except BodyError:
        raise invalid_quote_request("request body must be valid JSON") from None


def quotations_router(environment: str) -> Router:
    router = Router(tags=["quotations"], auth=token_auth(environment))

    @router.post("", response={201: dict[str, Any]}, url_name="quotations")
    def create(request: HttpRequest) -> Status[dict[str, Any]]:
        client: ApiClient = request.auth  # type: ignore[attr-defined]
        quote_request = validate_quote_request(_body(request))
        quote = quote_create(client=client, environment=environment, request=quote_request)
        return Status(201, {"data": quote_json(quote)})

    @router.get("/{quote_id}", url_name="quotation")
    def read(request: HttpRequest, quote_id: str) -> dict[str, Any]:
        client: ApiClient = request.auth  # type: ignore[attr-defined]
        quote = quote_get(quote_id=quote_id, client=client, environment=environment)
        return {"data": quote_json(quote)}

    @router.patch("/{quote_id}", url_name="quotation-update")
    def update(request: HttpRequest, quote_id: str) -> dict[str, Any]:
        client: ApiClient = request.auth  # type: ignore[attr-defined]
        body = _body(request)
        if not isinstance(body, dict):
            raise invalid_quote_request("request body must be a JSON object")
        amount = parse_amount(body.get("amount"))
        quote = quote_update_amount(
            quote_id=quote_id, client=client, environment=environment, amount=amount
        )
        return {"data": quote_json(quote)}

    return router
