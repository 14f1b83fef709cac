"""What one upstream read told about the open payouts, and the straggler bookkeeping (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from payouts.tracking.polling.due import Tracked
from payouts.tracking.polling.plan import Kind, Query


@dataclass(frozen=True)
class Outcome:
    changed: Mapping[int, str]  # key: the status the upstream reports (our name)
    confirmed: frozenset[int]  # as we have it: read now
    missing: frozenset[int]  # the read should have shown it and did not


def resolve(
    query: Query, *, seen: Mapping[str, str], tracked: Mapping[int, Tracked], complete: bool
) -> Outcome:
    """
    What a read told: `seen` maps the upstream ids it showed to their status (our names). Any
    open payout it showed is settled, covered or not. Only a `complete` read (every page, or the
    one GET answered) tells about the covered ones it did not show: still completed for RETURNS,
    missing otherwise.
    """
    by_upstream = {t.upstream_id: t for t in tracked.values()}
    changed: dict[int, str] = {}
    confirmed: set[int] = set()
    for upstream_id, status in seen.items():
        t = by_upstream.get(upstream_id)
        if t is None:
            continue
        if status == t.status:
            confirmed.add(t.key)
        else:
            changed[t.key] = status
    missing: set[int] = set()
    if complete:
        for key in query.covers:
            if key in changed or key in confirmed or key not in tracked:
                continue
            (confirmed if query.kind is Kind.RETURNS else missing).add(key)
    return Outcome(changed=changed, confirmed=frozenset(confirmed), missing=frozenset(missing))


def after_get(
    t: Tracked, status: str | None, *, now: datetime, listing_missed: bool
) -> tuple[int, datetime | None]:
    """
    The straggler bookkeeping (`misses`, `missed_at`) after one GET of `t`: `status` None when
    the upstream did not find it. Not found: one more miss, so a longer wait. Moved: it was only
    moving, back to the listings. Unchanged after a listing missed it: listed nowhere, so read
    by GET from now on, no sooner than its backoff.
    """
    if status is None:
        return t.misses + 1, now
    if status != t.status:
        return 0, None
    if t.misses:
        return t.misses, t.missed_at
    return (1, now) if listing_missed else (0, None)
