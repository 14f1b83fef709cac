"""Catch-up for virtual accounts: re-read those not settled yet (webhooks.mirrors)."""

from __future__ import annotations

from accounts.models import VirtualAccount, VirtualAccountStatus
from accounts.virtual_accounts import virtual_account_refresh
from gateway.models import Environment
from webhooks.mirrors import CatchUpResult, catch_up_each


def _refresh(va: VirtualAccount) -> bool:
    before = (va.status, va.available_balance)
    after = virtual_account_refresh(virtual_account=va, by=None)
    return (after.status, after.available_balance) != before


def virtual_accounts_catch_up(*, environment: Environment, limit: int) -> CatchUpResult:
    """
    Accounts still activating (the others are final: active, failed, frozen, deactivated),
    newest first: an activation that arrived only as an event is taken from the upstream's
    record, with the balance once active.
    """
    activating = (
        VirtualAccount.objects.filter(
            environment=environment, status=VirtualAccountStatus.ACTIVATING
        )
        .exclude(upstream_id="")
        .select_related("environment")
        .order_by("-created_at", "-pk")[:limit]
    )
    return catch_up_each(activating, _refresh)
