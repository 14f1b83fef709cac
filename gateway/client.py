"""The typed upstream client: `await upstream(env).quotations.create(...)`, one line a call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date
from decimal import Decimal
from typing import Any

from asgiref.sync import async_to_sync
from pydantic import BaseModel

from gateway import transport
from gateway.limiter import Priority
from gateway.models import Environment
from gateway.retry_policy import RetryNotice
from gateway.schemas import (
    AccessToken,
    Balance,
    Message,
    OtpSent,
    Payout,
    PayoutCreated,
    PayoutPage,
    PayoutPreview,
    PayoutStatus,
    Quote,
    Recipient,
    RecipientPage,
    User,
    VirtualAccount,
)


def _unwrap(body: Any) -> Any:
    """Success bodies are `{"data": ...}` except where the upstream answers bare: accept both."""
    if isinstance(body, dict) and isinstance(body.get("data"), dict | list):
        return body["data"]
    return body


def _drop_none(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _number(amount: Decimal | int | str) -> Any:
    """A quote amount is a JSON number: send a Decimal as an exact int or float of its digits."""
    value = Decimal(str(amount))
    return int(value) if value == value.to_integral_value() else float(value)


class _Resource:
    def __init__(self, client: Upstream) -> None:
        self._client = client

    async def _call(self, operation: str, method: str, path: str, **kwargs: Any) -> Any:
        return await transport.request(
            self._client.environment,
            operation=operation,
            method=method,
            path=path,
            priority=self._client.priority,
            **kwargs,
        )

    async def _read[M: BaseModel](
        self, model: type[M], operation: str, method: str, path: str, **kwargs: Any
    ) -> M:
        """One call whose answer (its `data`, when enveloped) is one `model`."""
        return model.model_validate(_unwrap(await self._call(operation, method, path, **kwargs)))


def _path(template: str, *params: str) -> str:
    """A path with its parameters filled; the call joins it onto the API root, once."""
    return transport.fill(template, *params)


class Auth(_Resource):
    async def token(self) -> AccessToken:
        """A fresh token straight from /auth (normal calls reuse the shared cached one)."""
        return await transport.authenticate(self._client.environment)


class Quotations(_Resource):
    async def create(
        self,
        *,
        quote_currency: str,
        amount: Decimal | int | str,
        base_currency: str | None = None,
        amount_in_destination: bool | None = None,
        account_type: str | None = None,
        network: str | None = None,
    ) -> Quote:
        body = _drop_none(
            {
                "quote_currency": quote_currency,
                "amount": _number(amount),
                "base_currency": base_currency,
                "amount_in_destination": amount_in_destination,
                "account_type": account_type,
                "network": network,
            }
        )
        return await self._read(Quote, "quotation_create", "POST", "v1/quotations", json=body)

    async def get(self, quote_id: str) -> Quote:
        return await self._read(Quote, "quotation_get", "GET", _path("v1/quotations/{}", quote_id))

    async def update(self, quote_id: str, *, amount: Decimal | int | str) -> Quote:
        return await self._read(
            Quote,
            "quotation_update",
            "PATCH",
            _path("v1/quotations/{}", quote_id),
            json={"amount": _number(amount)},
        )


class Verification(_Resource):
    async def send_otp(self, *, email: str) -> OtpSent:
        return await self._read(
            OtpSent, "otp_send", "POST", "verification/send", json={"email": email}
        )


class Payouts(_Resource):
    async def preview(
        self,
        *,
        virtual_account_id: str,
        amount: Decimal | str,
        recipient_id: str,
        create_quote: bool = False,
        payment_instructions: dict[str, str] | None = None,
        alias: bool = False,
    ) -> PayoutPreview:
        """Fees before a payout; `create_quote` reserves them 15 minutes as a quote. A crypto
        payout's preview passes the same `payment_instructions` as its initiation, so the fees
        include the network fee (decisions.md 2). `alias` uses the documented alternative
        `POST /payout/preview` (account id in the body)."""
        body: dict[str, Any] = {
            "amount": f"{Decimal(str(amount)):.2f}",
            "recipient_id": recipient_id,
            "create_quote": create_quote,
        }
        if payment_instructions is not None:
            body["payment_instructions"] = payment_instructions
        if alias:
            path = "payout/preview"
            body["virtual_account_id"] = virtual_account_id
        else:
            path = _path("v1/virtual-accounts/{}/payout/preview", virtual_account_id)
        return await self._read(PayoutPreview, "payout_preview", "POST", path, json=body)

    async def initiate(
        self,
        *,
        virtual_account_id: str,
        idempotency_key: str,
        recipient_id: str,
        amount: Decimal | str,
        otp: str | None = None,
        quote_id: str | None = None,
        payment_instructions: dict[str, str] | None = None,
        supporting_documents: list[dict[str, str]] | None = None,
        client_markup: dict[str, Any] | None = None,
        extra_info: dict[str, str] | None = None,
        reference: str | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
    ) -> PayoutCreated:
        """Fiat payouts pass the OTP; crypto payouts pass instructions and documents instead.
        `on_retry` hears of each retry (attempt, reason, next try) so the payout can show it."""
        # Absent options are left out: a fiat payout must not send instructions.
        body = {
            "recipient_id": recipient_id,
            "amount": f"{Decimal(str(amount)):.2f}",
            **_drop_none(
                {
                    "quote_id": quote_id,
                    "payment_instructions": payment_instructions,
                    "supporting_documents": supporting_documents,
                    "client_markup": client_markup,
                    "extra_info": extra_info,
                    "reference": reference,
                }
            ),
        }
        return await self._read(
            PayoutCreated,
            "payout_initiate",
            "POST",
            _path("v1/virtual-accounts/{}/payout", virtual_account_id),
            json=body,
            idempotency_key=idempotency_key,
            headers={"x-validation-header": otp} if otp else None,
            on_retry=on_retry,
        )

    async def get(self, payout_id: str) -> Payout:
        return await self._read(Payout, "payout_get", "GET", _path("v1/payouts/{}", payout_id))

    async def list(
        self,
        *,
        status: PayoutStatus | str | None = None,
        from_date: date | None = None,
        to_date: date | None = None,
        page: int = 1,
        limit: int = 100,
    ) -> PayoutPage:
        params = _drop_none(
            {
                "status": str(PayoutStatus(status)) if status else None,
                "from_date": from_date.isoformat() if from_date else None,
                "to_date": to_date.isoformat() if to_date else None,
                "page": page,
                "limit": limit,
            }
        )
        raw = await self._call("payout_list", "GET", "v1/payouts", params=params)
        return PayoutPage.model_validate(raw)


class Users(_Resource):
    async def create(
        self,
        *,
        idempotency_key: str,
        email: str,
        phone_number: str,
        first_name: str,
        last_name: str,
        country: str,
        type: str = "individual",
        **extra: Any,
    ) -> User:
        body = {
            "type": type,
            "email": email,
            "phone_number": phone_number,
            "first_name": first_name,
            "last_name": last_name,
            "country": country,
            **extra,
        }
        return await self._read(
            User, "user_create", "POST", "v1/users", json=body, idempotency_key=idempotency_key
        )

    async def update(self, user_id: str, **changes: Any) -> User:
        """Send only the fields to change (`type` may not be sent again)."""
        return await self._read(
            User, "user_update", "PUT", _path("v1/users/{}", user_id), json=changes
        )

    async def get(self, user_id: str) -> User:
        return await self._read(User, "user_get", "GET", _path("v1/users/{}", user_id))


class VirtualAccounts(_Resource):
    async def create(
        self, *, user_id: str, mode: str, bank: str = "slovak_savings_bank", type: str = "US_BANK"
    ) -> VirtualAccount:
        body = {"user_id": user_id, "type": type, "bank": bank, "mode": mode}
        return await self._read(
            VirtualAccount, "virtual_account_create", "POST", "v1/virtual-accounts", json=body
        )

    async def get(self, virtual_account_id: str) -> VirtualAccount:
        return await self._read(
            VirtualAccount,
            "virtual_account_get",
            "GET",
            _path("v1/virtual-accounts/{}", virtual_account_id),
        )

    async def list(self, *, user_id: str) -> list[VirtualAccount]:
        raw = await self._call(
            "virtual_account_list", "GET", "v1/virtual-accounts", params={"user_id": user_id}
        )
        items = _unwrap(raw)
        if isinstance(items, dict):
            items = items.get("virtual_accounts", items.get("items", []))
        return [VirtualAccount.model_validate(item) for item in items]

    async def balance(self, virtual_account_id: str) -> Balance:
        return await self._read(
            Balance,
            "virtual_account_balance",
            "GET",
            _path("v1/virtual-accounts/{}/balance", virtual_account_id),
        )


class Recipients(_Resource):
    async def create(
        self,
        *,
        user_id: str,
        email: str,
        address: dict[str, str],
        account: dict[str, str],
        first_name: str | None = None,
        last_name: str | None = None,
        company_name: str | None = None,
        **extra: Any,
    ) -> Recipient:
        body = _drop_none(
            {
                "user_id": user_id,
                "first_name": first_name,
                "last_name": last_name,
                "company_name": company_name,
                "email": email,
                "address": address,
                "account": account,
                **extra,
            }
        )
        return await self._read(Recipient, "recipient_create", "POST", "v1/recipients", json=body)

    async def get(self, recipient_id: str) -> Recipient:
        return await self._read(
            Recipient, "recipient_get", "GET", _path("v1/recipients/{}", recipient_id)
        )

    async def list(self, *, user_id: str) -> RecipientPage:
        raw = await self._call(
            "recipient_list", "GET", "v1/recipients", params={"user_id": user_id}
        )
        return RecipientPage.model_validate(raw)


class Webhooks(_Resource):
    async def register(self, *, webhook_url: str, secret: str, client_uuid: str) -> Message:
        raw = await self._call(
            "webhook_register",
            "POST",
            "webhooks/register",
            json={"webhook_url": webhook_url, "secret": secret, "client_uuid": client_uuid},
        )
        return Message.model_validate(raw if isinstance(raw, dict) else {})


class Upstream:
    """Every upstream operation of one environment, typed; `priority` ranks it in the limiter."""

    def __init__(self, environment: Environment, *, priority: Priority = Priority.STAFF) -> None:
        self.environment = environment
        self.priority = priority
        self.auth = Auth(self)
        self.quotations = Quotations(self)
        self.verification = Verification(self)
        self.payouts = Payouts(self)
        self.users = Users(self)
        self.virtual_accounts = VirtualAccounts(self)
        self.recipients = Recipients(self)
        self.webhooks = Webhooks(self)


def upstream(environment: Environment, *, background: bool = False) -> Upstream:
    """The client of one environment; background work (polling, refreshes) says background=True."""
    return Upstream(environment, priority=Priority.BACKGROUND if background else Priority.STAFF)


def call_sync[**P, T](func: Callable[P, Awaitable[T]], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """
    The one sync bridge, for sync views, commands and django-q2 tasks:
    `call_sync(upstream(env).quotations.get, quote_id)`. Same coroutine, no duplicated logic.
    """
    return async_to_sync(func)(*args, **kwargs)
