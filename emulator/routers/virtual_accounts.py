"""/v1/virtual-accounts: create, read, list by user, balance; payout preview and initiation."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from ninja import Router

from emulator.auth import token_auth
from emulator.domain.accounts import account_create, account_get, account_payload, balance_payload
from emulator.domain.formats import json_body, validation_error
from emulator.domain.payouts import payout_preview
from emulator.domain.selectors import accounts_of
from emulator.errors import resource_error
from emulator.routers.payouts import initiate_payout
from emulator.routers.respond import caller, respond
from emulator.routers.schemas import (
    PayoutBody,
    PreviewAliasBody,
    PreviewBody,
    VirtualAccountBody,
    body_doc,
)


def virtual_accounts_router(environment: str) -> Router:
    router = Router(tags=["virtual accounts"], auth=token_auth(environment))

    @router.post("", url_name="virtual-accounts", openapi_extra=body_doc(VirtualAccountBody))
    def create(request: HttpRequest) -> JsonResponse:
        account = account_create(
            client=caller(request), environment=environment, body=json_body(request)
        )
        return respond(201, {"data": account_payload(account)})

    @router.get("", url_name="virtual-accounts-list")
    def listing(request: HttpRequest) -> JsonResponse:
        accounts = accounts_of(
            client=caller(request), environment=environment, user_id=request.GET.get("user_id")
        )
        return respond(200, {"data": [account_payload(item) for item in accounts]})

    @router.get("/{account_id}", url_name="virtual-account")
    def read(request: HttpRequest, account_id: str) -> JsonResponse:
        account = account_get(
            client=caller(request), environment=environment, account_id=account_id
        )
        return respond(200, {"data": account_payload(account)})

    @router.get("/{account_id}/balance", url_name="virtual-account-balance")
    def balance(request: HttpRequest, account_id: str) -> JsonResponse:
        account = account_get(
            client=caller(request), environment=environment, account_id=account_id
        )
        if account.status == "activating":
            raise resource_error(
                400,
                "VIRTUAL_ACCOUNT_NOT_ACTIVE",
                "The virtual account is still activating",
                [("virtual_account_id", "status is activating")],
            )
        return respond(200, {"data": balance_payload(account)})

    @router.post(
        "/{account_id}/payout/preview",
        url_name="payout-preview",
        openapi_extra=body_doc(PreviewBody),
    )
    def preview(request: HttpRequest, account_id: str) -> JsonResponse:
        return _preview(request, environment, account_id, json_body(request))

    @router.post(
        "/{account_id}/payout", url_name="payout-initiate", openapi_extra=body_doc(PayoutBody)
    )
    def payout(request: HttpRequest, account_id: str) -> JsonResponse:
        return initiate_payout(request, environment=environment, account_id=account_id)

    return router


def payout_preview_router(environment: str) -> Router:
    """The alias POST /payout/preview, with virtual_account_id in the body."""
    router = Router(tags=["payouts"], auth=token_auth(environment))

    @router.post(
        "/preview", url_name="payout-preview-alias", openapi_extra=body_doc(PreviewAliasBody)
    )
    def preview_alias(request: HttpRequest) -> JsonResponse:
        body = json_body(request)
        account_id = body.pop("virtual_account_id", None)
        if not account_id:
            raise validation_error([("virtual_account_id", "is required")])
        return _preview(request, environment, account_id, body)

    return router


def _preview(
    request: HttpRequest, environment: str, account_id: str, body: dict[str, Any]
) -> JsonResponse:
    """The payout preview of the caller's account, whichever path named it."""
    client = caller(request)
    account = account_get(client=client, environment=environment, account_id=account_id)
    data = payout_preview(client=client, environment=environment, account=account, body=body)
    return respond(200, {"data": data})
