"""Tell staff browsers that a payout changed (after commit), so its page re-fetches the timeline."""

from __future__ import annotations

from payouts.models import Payout
from staff.broadcast import broadcast_event_on_commit

PAYOUT_CHANGED = "payout.changed"


def payout_changed(payout: Payout) -> None:
    """Queue a small "payout N is now S" message; nothing is sent if the transaction rolls back."""
    broadcast_event_on_commit(
        PAYOUT_CHANGED, {"payout_id": payout.pk, "status": str(payout.status)}
    )
