"""/v1/payouts (read, list) and the initiation flow behind POST /v1/virtual-accounts/{id}/payout."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.utils.dateparse import parse_date, parse_datetime
from ninja import Router

from emulator.auth import token_auth
from emulator.domain import payout_states as states
from emulator.domain.accounts import account_get
from emulator.domain.formats import json_body, validation_error
from emulator.domain.otp import otp_check
from emulator.domain.payout_requests import check_mode, parse_payout_request
from emulator.domain.payouts import (
    check_account_usable,
    payout_create,
    payout_created_payload,
    payout_for_client,
    payout_payload,
    payout_recipient,
)
from emulator.domain.selectors import payouts_page
from emulator.errors import EmulatorError
from emulator.idempotency import idempotent, required_key
from emulator.models import IdempotencyRecord, OtpCode
from emulator.routers.respond import caller, respond

LIST_PARAMETERS = frozenset({"status", "from_date", "to_date", "page", "limit"})
MAX_LIMIT = 100


def initiate_payout(request: HttpRequest, *, environment: str, account_id: str) -> JsonResponse:
    """Checks in the documented order, then creates the payout once per idempotency key.

    The OTP is checked (and a wrong try counted) before the idempotent transaction, which would
    roll the count back; it is consumed inside that transaction, with the payout.
    """
    client = caller(request)
    key = required_key(request)
    account = account_get(client=client, environment=environment, account_id=account_id)
    scope = f"payout:{account.id}"
    stored = IdempotencyRecord.objects.filter(
        client=client, environment=environment, scope=scope, key=key
    )
    replay = stored.exists()
    payout_request = parse_payout_request(json_body(request))
    otp: OtpCode | None = None
    if not replay:
        check_account_usable(account)
        check_mode(account, payout_request)
        payout_recipient(
            client=client, environment=environment, recipient_id=payout_request.recipient_id
        )
        if account.mode == "fiat":
            try:
                otp = otp_check(
                    client=client,
                    environment=environment,
                    code=request.headers.get("x-validation-header"),
                )
            except EmulatorError:
                # A concurrent duplicate may have just consumed the code: then replay its answer.
                if not stored.exists():
                    raise

    def handler() -> tuple[int, dict[str, Any]]:
        payout = payout_create(
            client=client,
            environment=environment,
            account_id=account.id,
            request=payout_request,
            otp=otp,
        )
        return 201, {"data": payout_created_payload(payout)}

    status, body = idempotent(
        request, client=client, environment=environment, scope=scope, handler=handler
    )
    return respond(status, body)


def _moment(value: str, field: str, end: bool) -> datetime:
    # A bare date first: parse_datetime (fromisoformat) would read "2026-11-23" as midnight,
    # and a to_date would then exclude its own day.
    day: date | None = parse_date(value) if len(value) == 10 else None
    parsed = datetime.combine(day, time.max if end else time.min) if day else parse_datetime(value)
    if parsed is None:
        raise validation_error([(field, "must be an ISO 8601 date or date-time")])
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _positive_int(value: str | None, field: str, default: int) -> int:
    if value is None or value == "":
        return default
    if not value.isdigit() or int(value) < 1:
        raise validation_error([(field, "must be a positive integer")])
    return int(value)


def payouts_router(environment: str) -> Router:
    router = Router(tags=["payouts"], auth=token_auth(environment))

    @router.get("", url_name="payouts")
    def listing(request: HttpRequest) -> JsonResponse:
        unknown = sorted(set(request.GET) - LIST_PARAMETERS)
        if unknown:
            raise validation_error([(name, "is not a known query parameter") for name in unknown])
        status = (request.GET.get("status") or "").upper() or None
        if status and status not in states.TRANSITIONS:
            raise validation_error([("status", "is not a payout status")])
        from_date = request.GET.get("from_date")
        to_date = request.GET.get("to_date")
        limit = _positive_int(request.GET.get("limit"), "limit", 20)
        if limit > MAX_LIMIT:
            raise validation_error([("limit", f"must be at most {MAX_LIMIT}")])
        result = payouts_page(
            client=caller(request),
            environment=environment,
            status=status,
            from_date=_moment(from_date, "from_date", end=False) if from_date else None,
            to_date=_moment(to_date, "to_date", end=True) if to_date else None,
            page=_positive_int(request.GET.get("page"), "page", 1),
            limit=limit,
        )
        return respond(
            200,
            {
                "payouts": [payout_payload(item) for item in result.payouts],
                "page": result.page,
                "limit": result.limit,
                "total": result.total,
                "total_pages": result.total_pages,
            },
        )

    @router.get("/{payout_id}", url_name="payout")
    def read(request: HttpRequest, payout_id: str) -> JsonResponse:
        payout = payout_for_client(
            client=caller(request), environment=environment, payout_id=payout_id
        )
        return respond(200, payout_payload(payout))

    return router
