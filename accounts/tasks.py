"""Background work on virtual accounts: thin wrappers that load ids and call services."""

from __future__ import annotations

from accounts.models import VirtualAccount
from accounts.virtual_accounts import virtual_account_refresh


def virtual_account_refresh_task(virtual_account_id: int) -> None:
    """Status and balance after a deposit event (the event carries no balance)."""
    va = VirtualAccount.objects.filter(pk=virtual_account_id).first()
    if va is not None and va.is_synced:
        virtual_account_refresh(virtual_account=va, by=None)


def virtual_accounts_track_activation() -> int:
    """Read back every activating account older than a few seconds; returns how many."""
    from datetime import timedelta

    from django.utils import timezone

    from accounts.models import VirtualAccountStatus
    from staff.errors import ServiceError

    due = VirtualAccount.objects.filter(
        status=VirtualAccountStatus.ACTIVATING,
        created_at__lte=timezone.now() - timedelta(seconds=5),
    ).exclude(upstream_id="")
    done = 0
    for va in due.select_related("environment")[:50]:
        try:
            virtual_account_refresh(virtual_account=va, by=None)
        except ServiceError:
            continue  # the upstream did not answer: the next run tries again
        done += 1
    return done
