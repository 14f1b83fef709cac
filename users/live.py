"""Tell staff browsers that a mirrored record changed (after commit), so its pages re-read it.

Every change of an end user, virtual account or recipient writes a line on its timeline
(`users.mirror.timeline_add`), which calls `mirror_changed`: no service can forget it.
"""

from __future__ import annotations

from console.broadcast import broadcast_event_on_commit, roles_holding
from staff.roles import DIRECTORY_VIEW
from users.models import UpstreamMirror

# Only the roles that may read the directory hear about its records.
READER_ROLES = roles_holding(DIRECTORY_VIEW)


def mirror_changed(record: UpstreamMirror) -> None:
    """Queue "<kind>.changed" naming the record and its end user (the end user's page shows its
    accounts and recipients too); nothing is sent if the transaction rolls back."""
    kind = record.live_kind
    end_user_id = getattr(record, "end_user_id", None) or record.pk
    payload = {"end_user_id": end_user_id, f"{kind}_id": record.pk}
    broadcast_event_on_commit(f"{kind}.changed", payload, roles=READER_ROLES)
