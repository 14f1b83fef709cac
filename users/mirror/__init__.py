"""
Keeping a mirror of an upstream record (end user, virtual account, recipient), one way for all.

- `mirror_create`: find or create our row by the submission's `request_key` (its creator's, bound
  to the request's fingerprint), commit it with a claim so one call per submission is in flight,
  call the upstream outside any transaction, drop the row when the upstream refused it for good, and
  record the answer, folding in a row that a webhook created before the answer arrived.
- `mirror_apply_event`: lock the record an event names (creating its mirror when unknown), apply
  an event once per `event_id`, write the timeline line and the audit entry; each kind brings
  its own small reading and applying functions.
- The pieces they share: permissions, timeline lines, refresh records and event-data errors.

One module a concept: `records` (what they share), `create`, `events`; every name is
importable from `users.mirror` itself.
"""

from users.mirror.create import (
    IdempotencyKeyInFlight,
    IdempotencyKeyReused,
    fingerprint_of,
    mirror_adopt_unknown,
    mirror_create,
    mirror_store_created,
    upstream_answer,
)
from users.mirror.events import (
    EventOutcome,
    event_record_id,
    mirror_apply_event,
)
from users.mirror.records import (
    EventDataError,
    MirrorKind,
    parse_time,
    record_refresh,
    refresh_after_commit,
    require,
    snapshot_of,
    timeline_add,
)

__all__ = [
    "EventDataError",
    "EventOutcome",
    "IdempotencyKeyInFlight",
    "IdempotencyKeyReused",
    "MirrorKind",
    "event_record_id",
    "fingerprint_of",
    "mirror_adopt_unknown",
    "mirror_apply_event",
    "mirror_create",
    "mirror_store_created",
    "parse_time",
    "record_refresh",
    "refresh_after_commit",
    "require",
    "snapshot_of",
    "timeline_add",
    "upstream_answer",
]
