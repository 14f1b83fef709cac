"""Models of users, virtual accounts (and balances), recipients and webhook registration."""

from __future__ import annotations

from typing import Any

from gateway.schemas.common import Money, Timestamp, UpstreamModel


class User(UpstreamModel):
    user_id: str
    type: str | None = None
    email: str | None = None
    phone: str | None = None
    status: str | None = None
    verification_status: str | None = None
    requires_reverification: bool | None = None


class VirtualAccount(UpstreamModel):
    id: str
    user_id: str | None = None
    type: str | None = None
    bank: str | None = None
    mode: str | None = None
    status: str
    account_number: str | None = None
    routing_number: str | None = None
    currency: str | None = None


class Balance(UpstreamModel):
    virtual_account_id: str
    available_balance: Money
    currency: str
    updated_at: Timestamp | None = None


class Recipient(UpstreamModel):
    recipient_id: str
    user_id: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    company_name: str | None = None
    email: str | None = None
    address: dict[str, Any] | None = None
    account: dict[str, Any] | None = None
    created_ts: Timestamp | None = None


class RecipientPage(UpstreamModel):
    recipients: list[Recipient]
    total: int


class Message(UpstreamModel):
    message: str | None = None
