"""Where a web process has read the live outbox up to: a pure decision over explicit state.

Outbox ids are handed out when a row is inserted, but rows become visible when their transaction
commits, and on PostgreSQL two transactions may commit in the other order: id 11 can be read
while id 10 is still on its way. Reading "ids above the highest seen" alone would then skip 10
forever. So an id jumped over is kept as a gap and asked for again on every read until it shows
up or GAP_WAIT passes (its transaction rolled back, or the row was pruned). On SQLite, writers
take turns and ids commit in order, so gaps are rare (only pruned rows) and cost nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

# Seconds an id jumped over is waited for. Transactions here are short (no upstream call inside
# one), so a row that has not appeared after this long belonged to a rolled-back transaction.
GAP_WAIT = 30.0
# At most this many ids are waited for at once (the newest kept): a bound on the read's IN list.
MAX_GAPS = 200


@dataclass(frozen=True)
class Cursor:
    """The highest id read, and the ids below it still awaited (id -> give up at, monotonic)."""

    last_id: int = 0
    gaps: dict[int, float] = field(default_factory=dict)


def _bounded(gaps: dict[int, float]) -> dict[int, float]:
    if len(gaps) <= MAX_GAPS:
        return gaps
    return {gap: gaps[gap] for gap in sorted(gaps)[-MAX_GAPS:]}


def cursor_start(
    *, newest_id: int, settled_id: int, recent_ids: Iterable[int], now: float
) -> Cursor:
    """
    Where a poller starts: after the newest row, so nothing already sent is replayed. `settled_id`
    is the newest id older than GAP_WAIT; the ids above it missing from `recent_ids` may still be
    on their way (a transaction that began before the start and commits after it): awaited.
    """
    present = set(recent_ids)
    gaps = {
        gap: now + GAP_WAIT
        for gap in range(max(settled_id + 1, newest_id - MAX_GAPS), newest_id)
        if gap not in present
    }
    return Cursor(last_id=newest_id, gaps=gaps)


def cursor_advance(cursor: Cursor, *, read_ids: Iterable[int], now: float) -> Cursor:
    """The cursor after reading `read_ids` (all the rows asked for up to the highest one read)."""
    read = set(read_ids)
    gaps = {gap: until for gap, until in cursor.gaps.items() if gap not in read and until > now}
    highest = max(read, default=cursor.last_id)
    if highest > cursor.last_id:
        for skipped in range(max(cursor.last_id + 1, highest - MAX_GAPS), highest):
            if skipped not in read:
                gaps[skipped] = now + GAP_WAIT
    return Cursor(last_id=max(highest, cursor.last_id), gaps=_bounded(gaps))
