"""Reads of the domain: one client's accounts, recipients and a page of payouts."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from emulator.domain.formats import validation_error
from emulator.models import ApiClient, Payout, Recipient, VirtualAccount


def _user_key(user_id: str | None) -> uuid.UUID | None:
    if not user_id:
        return None
    try:
        return uuid.UUID(user_id)
    except ValueError:
        raise validation_error([("user_id", "must be a UUID")]) from None


def accounts_of(
    *, client: ApiClient, environment: str, user_id: str | None
) -> QuerySet[VirtualAccount]:
    accounts = VirtualAccount.objects.filter(client=client, environment=environment)
    key = _user_key(user_id)
    return accounts.filter(user_id=key) if key else accounts


def recipients_of(
    *, client: ApiClient, environment: str, user_id: str | None
) -> QuerySet[Recipient]:
    recipients = Recipient.objects.filter(client=client, environment=environment)
    key = _user_key(user_id)
    return (recipients.filter(user_id=key) if key else recipients).order_by("-created_at")


@dataclass(frozen=True)
class PayoutPage:
    payouts: list[Payout]
    page: int
    limit: int
    total: int

    @property
    def total_pages(self) -> int:
        return math.ceil(self.total / self.limit) if self.total else 0


def payouts_page(
    *,
    client: ApiClient,
    environment: str,
    status: str | None,
    from_date: datetime | None,
    to_date: datetime | None,
    page: int,
    limit: int,
) -> PayoutPage:
    payouts = Payout.objects.filter(client=client, environment=environment)
    if status:
        payouts = payouts.filter(status=status)
    if from_date:
        payouts = payouts.filter(created_at__gte=from_date)
    if to_date:
        payouts = payouts.filter(created_at__lte=to_date)
    total = payouts.count()
    window = payouts.order_by("-created_at", "-payout_id")[(page - 1) * limit : page * limit]
    return PayoutPage(payouts=list(window), page=page, limit=limit, total=total)
