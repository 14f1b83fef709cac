"""Which parts of an end-user event to apply: a pure decision over the record's known state.

Events may arrive twice and out of order (decisions.md 4). `user.created` and `user.updated`
carry the upstream's own time; verification decisions carry none (interface.md 6.4). So:

- identity fields (email, phone, type) follow the newest upstream time seen: an event older than
  the record's `upstream_updated_at` changes nothing;
- `user.created` never moves verification back (it is the first thing that happened);
- a verification decision applies unless it is the one already recorded (same `ver_` id);
- where order cannot be proven from the payloads (an update restarting verification after a
  decision was recorded, or a decision replacing another one), the event is applied and the
  record is refreshed from the upstream, which settles it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime


class UserEvent(enum.StrEnum):
    CREATED = "user.created"
    UPDATED = "user.updated"
    VERIFICATION_ACCEPTED = "user.verification.accepted"
    VERIFICATION_FAILED = "user.verification.failed"


@dataclass(frozen=True)
class UserKnown:
    """What the record already holds (a new mirror: everything empty)."""

    upstream_updated_at: datetime | None
    verification_status: str
    verification_id: str
    is_new: bool


@dataclass(frozen=True)
class UserVerdict:
    fields: bool  # apply email/phone/type (and the event's time)
    verification: bool  # apply status/verification_status/reasons from the event
    refresh: bool  # the order is ambiguous: ask the upstream for the current record
    why: str


DECIDED = frozenset({"verified", "rejected"})


def decide_user_event(
    known: UserKnown,
    *,
    event: UserEvent,
    event_at: datetime | None,
    verification_id: str = "",
    restarts_verification: bool = False,
) -> UserVerdict:
    newer = known.upstream_updated_at is None or (
        event_at is not None and event_at >= known.upstream_updated_at
    )
    if event is UserEvent.CREATED:
        return UserVerdict(
            fields=newer,
            verification=known.is_new,
            refresh=False,
            why="first event of this user" if known.is_new else "creation is older than our state",
        )
    if event is UserEvent.UPDATED:
        if not newer:
            return UserVerdict(False, False, False, "older than the last update we applied")
        if restarts_verification:
            ambiguous = known.verification_status in DECIDED
            return UserVerdict(
                True,
                True,
                ambiguous,
                "identity changed: verification restarts"
                + (" (a decision was already recorded: refreshing)" if ambiguous else ""),
            )
        return UserVerdict(True, False, False, "newer update")
    # Verification decisions carry no time: the same decision twice is a replay.
    if verification_id and verification_id == known.verification_id:
        return UserVerdict(False, False, False, "this decision is already recorded")
    replacing = known.verification_status in DECIDED and bool(known.verification_id)
    return UserVerdict(
        False,
        True,
        replacing,
        "verification decided"
        + (" (replaces an earlier decision: refreshing)" if replacing else ""),
    )
