"""Background work on virtual accounts: thin wrappers that load ids and call services."""

from __future__ import annotations

from accounts.models import VirtualAccount
from accounts.services import virtual_account_refresh


def virtual_account_refresh_task(virtual_account_id: int) -> None:
    """Status and balance after a deposit event (the event carries no balance)."""
    va = VirtualAccount.objects.filter(pk=virtual_account_id).first()
    if va is not None and va.is_synced:
        virtual_account_refresh(virtual_account=va, by=None)
