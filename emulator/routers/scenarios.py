"""/_control/ scenario calls: mailbox, deposits, account states, KYC decisions, tick, webhooks."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpRequest, JsonResponse
from ninja import Router

from emulator.domain.accounts import (
    account_payload,
    account_set_status,
    balance_payload,
    deposit_simulate,
)
from emulator.domain.events import emit
from emulator.domain.formats import json_body, validation_error
from emulator.domain.otp import mailbox
from emulator.domain.outside import balance_adjust, payout_outside, payout_status_silently
from emulator.domain.payout_progress import payout_deposit
from emulator.domain.payouts import payout_payload
from emulator.domain.tick import tick
from emulator.domain.users import user_decide, user_payload
from emulator.domain.webhooks import deliveries_log, flush
from emulator.errors import resource_error
from emulator.models import ApiClient, Environment
from emulator.routers.respond import respond
from emulator.routers.schemas import (
    BalanceAdjustBody,
    ControlEventBody,
    CryptoDepositBody,
    DecisionBody,
    DepositBody,
    OutsidePayoutBody,
    PayoutStatusBody,
    StatusBody,
    body_doc,
)


def _client(client_id: Any) -> ApiClient:
    try:
        key = uuid.UUID(str(client_id))
    except ValueError:
        raise validation_error([("client_id", "must be a UUID")]) from None
    client = ApiClient.objects.filter(client_id=key).first()
    if client is None:
        raise resource_error(404, "CLIENT_NOT_FOUND", "API client not found")
    return client


def scenario_control_router() -> Router:
    """The scenario calls, in the order the API documents them."""
    router = Router(tags=["control"])
    _add_mailbox_and_kyc(router)
    _add_clock_and_webhooks(router)
    _add_payout_and_event_scenarios(router)
    _add_reconciliation_scenarios(router)
    return router


def _add_mailbox_and_kyc(router: Router) -> None:
    """The OTP mailbox, deposits, account states and KYC decisions."""

    @router.get("/mailbox", url_name="control-mailbox")
    def read_mailbox(request: HttpRequest) -> JsonResponse:
        email = request.GET.get("email", "")
        if not email:
            raise validation_error([("email", "is required")])
        return respond(200, {"messages": mailbox(email=email)})

    @router.post("/deposits", url_name="control-deposits", openapi_extra=body_doc(DepositBody))
    def deposit(request: HttpRequest) -> JsonResponse:
        body = json_body(request)
        result = deposit_simulate(
            account_id=body.get("virtual_account_id"), amount=body.get("amount")
        )
        return respond(201, {"data": result})

    @router.post(
        "/virtual-accounts/{account_id}/status",
        url_name="control-account-status",
        openapi_extra=body_doc(StatusBody),
    )
    def account_status(request: HttpRequest, account_id: str) -> JsonResponse:
        status = json_body(request).get("status")
        account = account_set_status(account_id=account_id, status=status)
        return respond(200, {"data": account_payload(account)})

    @router.post(
        "/users/{user_id}/decision",
        url_name="control-user-decision",
        openapi_extra=body_doc(DecisionBody),
    )
    def decide(request: HttpRequest, user_id: str) -> JsonResponse:
        body = json_body(request)
        user = user_decide(user_id=user_id, accept=body.get("accept"), reasons=body.get("reasons"))
        return respond(200, {"data": user_payload(user)})


def _add_clock_and_webhooks(router: Router) -> None:
    """The clock's tick and the webhook outbox."""

    @router.post("/tick", url_name="control-tick")
    def run_tick(request: HttpRequest) -> JsonResponse:
        return respond(200, tick())

    @router.post("/webhooks/flush", url_name="control-webhooks-flush")
    def flush_webhooks(request: HttpRequest) -> JsonResponse:
        return respond(200, {"attempted": flush()})

    @router.get("/webhooks/deliveries", url_name="control-webhooks-deliveries")
    def deliveries(request: HttpRequest) -> JsonResponse:
        client_id = request.GET.get("client_id", "")
        if client_id:
            _client(client_id)
        log = deliveries_log(event_id=request.GET.get("event_id", ""), client_id=client_id)
        return respond(200, {"deliveries": log})


def _add_payout_and_event_scenarios(router: Router) -> None:
    """A crypto payout's deposit, and an event queued by hand."""

    @router.post(
        "/payouts/{payout_id}/deposit",
        url_name="control-payout-deposit",
        openapi_extra=body_doc(CryptoDepositBody),
    )
    def crypto_deposit(request: HttpRequest, payout_id: str) -> JsonResponse:
        payout = payout_deposit(payout_id=payout_id, amount=json_body(request).get("amount"))
        return respond(200, payout_payload(payout))

    @router.post("/events", url_name="control-events", openapi_extra=body_doc(ControlEventBody))
    def queue_event(request: HttpRequest) -> JsonResponse:
        return respond(201, _queue_event(json_body(request)))


def _add_reconciliation_scenarios(router: Router) -> None:
    """What happens upstream without PayOps knowing (emulator.domain.outside)."""

    @router.post(
        "/payouts", url_name="control-payouts-outside", openapi_extra=body_doc(OutsidePayoutBody)
    )
    def outside_payout(request: HttpRequest) -> JsonResponse:
        body = json_body(request)
        payout = payout_outside(
            account_id=body.get("virtual_account_id"),
            recipient_id=body.get("recipient_id"),
            amount=body.get("amount"),
            reference=body.get("reference"),
        )
        return respond(201, payout_payload(payout))

    @router.post(
        "/payouts/{payout_id}/status",
        url_name="control-payout-status",
        openapi_extra=body_doc(PayoutStatusBody),
    )
    def silent_status(request: HttpRequest, payout_id: str) -> JsonResponse:
        status = json_body(request).get("status")
        return respond(
            200, payout_payload(payout_status_silently(payout_id=payout_id, status=status))
        )

    @router.post(
        "/virtual-accounts/{account_id}/balance-adjustments",
        url_name="control-balance-adjust",
        openapi_extra=body_doc(BalanceAdjustBody),
    )
    def adjust_balance(request: HttpRequest, account_id: str) -> JsonResponse:
        account = balance_adjust(account_id=account_id, amount=json_body(request).get("amount"))
        return respond(200, balance_payload(account))


def _queue_event(body: dict[str, Any]) -> dict[str, Any]:
    """Emit the event a control call describes; its id, and whether a delivery was queued."""
    client = _client(body.get("client_id"))
    event, data = body.get("event"), body.get("data", {})
    environment = body.get("environment", Environment.SANDBOX)
    if not isinstance(event, str) or not event:
        raise validation_error([("event", "is required")])
    if not isinstance(data, dict):
        raise validation_error([("data", "must be an object")])
    if environment not in Environment.values:
        raise validation_error([("environment", "must be production or sandbox")])
    stored = emit(client=client, environment=environment, event=event, data=data)
    return {"event_id": stored.event_id, "queued": hasattr(stored, "delivery")}
