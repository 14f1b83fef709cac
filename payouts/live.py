"""Tell staff browsers that a payout changed (after commit), so its page re-fetches the timeline."""

from __future__ import annotations

from console.broadcast import broadcast_event_on_commit
from payouts.models import Payout
from staff.roles import COMPLIANCE_VIEW, FINANCE_VIEW, ROLES

PAYOUT_CHANGED = "payout.changed"
# Only the roles that may read payouts hear about them (the message is small, but still theirs).
READER_ROLES = tuple(
    role.key for role in ROLES if {FINANCE_VIEW, COMPLIANCE_VIEW} & set(role.permissions)
)


def payout_changed(payout: Payout) -> None:
    """Queue a small "payout N is now S" message; nothing is sent if the transaction rolls back."""
    payload = {"payout_id": payout.pk, "status": str(payout.status)}
    for role in READER_ROLES:
        broadcast_event_on_commit(PAYOUT_CHANGED, payload, role=role)
