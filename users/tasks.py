"""Background work on end users: thin wrappers that load ids and call services."""

from __future__ import annotations

from users.models import EndUser
from users.services import end_user_refresh


def end_user_refresh_task(end_user_id: int) -> None:
    """Settle an end user whose events arrived in an order the payloads could not resolve."""
    end_user = EndUser.objects.filter(pk=end_user_id).first()
    if end_user is not None and end_user.is_synced:
        end_user_refresh(end_user=end_user, by=None)
