"""Catch-up for virtual accounts: re-read those not settled yet (webhooks.mirrors)."""

from __future__ import annotations

from accounts.models import VirtualAccount, VirtualAccountStatus
from accounts.virtual_accounts import virtual_account_refresh
from gateway.models import Environment
from users.catch_up import catch_up_refreshing
from webhooks.mirrors import CatchUpResult


def virtual_accounts_catch_up(*, environment: Environment, limit: int) -> CatchUpResult:
    """
    Accounts still activating (the others are final: active, failed, frozen, deactivated),
    newest first: an activation that arrived only as an event is taken from the upstream's
    record, with the balance once active.
    """
    return catch_up_refreshing(
        VirtualAccount.objects.filter(
            environment=environment, status=VirtualAccountStatus.ACTIVATING
        ),
        order=("-created_at", "-pk"),
        limit=limit,
        refresh=lambda va: virtual_account_refresh(virtual_account=va, by=None),
        state=lambda va: (va.status, va.available_balance),
    )
