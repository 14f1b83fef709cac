"""Tell staff browsers that an alert changed (after commit): fired, acknowledged or resolved, so
the dashboard's alerts panel and the alert history re-read themselves.

`staff.actions` calls `alert_changed` for every action on an alert (registered in AlertsConfig).
The same message twice in one transaction is sent once (console.broadcast).
"""

from __future__ import annotations

from alerts.models import Alert
from console.broadcast import broadcast_event_on_commit, roles_holding
from staff.roles import ALERTS_VIEW

ALERT_CHANGED = "alert.changed"
# Only the roles that may read alerts hear about them.
READER_ROLES = roles_holding(ALERTS_VIEW)


def alert_changed(alert: Alert) -> None:
    """Queue a small "alert N is now S" message; nothing is sent if the transaction rolls back."""
    payload = {"alert_id": alert.pk, "state": str(alert.state)}
    broadcast_event_on_commit(ALERT_CHANGED, payload, roles=READER_ROLES)
