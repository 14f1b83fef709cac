"""Tell staff browsers that a payout changed (after commit), so its page re-fetches the timeline.

The actions in `payouts.states` call `payout_changed`: `payout_transition` on every move,
`payout_change_record` for changes that move no status (an approval short of the count, a code
sent, a re-quote). The same message twice in one transaction is sent once (console.broadcast).
"""

from __future__ import annotations

from console.broadcast import broadcast_event_on_commit, roles_holding
from payouts.models import Payout
from staff.roles import COMPLIANCE_VIEW, FINANCE_VIEW

PAYOUT_CHANGED = "payout.changed"
# Only the roles that may read payouts hear about them (the message is small, but still theirs).
READER_ROLES = roles_holding(FINANCE_VIEW, COMPLIANCE_VIEW)


def payout_changed(payout: Payout) -> None:
    """Queue a small "payout N is now S" message; nothing is sent if the transaction rolls back."""
    payload = {"payout_id": payout.pk, "status": str(payout.status)}
    broadcast_event_on_commit(PAYOUT_CHANGED, payload, roles=READER_ROLES)
