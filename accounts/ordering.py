"""Virtual-account statuses ranked, so an older event never moves an account backwards.

`virtual_account.created` (activating) and `virtual_account.activated` (active) carry no time
(decisions.md 4), but the states only move forward: activating → active → frozen/failed →
deactivated (frozen may return to active, which only a refresh from the upstream can tell).
"""

from __future__ import annotations

RANK = {"activating": 0, "active": 1, "frozen": 2, "failed": 2, "deactivated": 3}


def status_rank(status: str) -> int:
    if status not in RANK:
        raise ValueError(f"unknown virtual account status {status!r}")
    return RANK[status]


def should_move(current: str, incoming: str, *, is_new: bool) -> bool:
    """Whether an event saying `incoming` moves an account now `current` (a new mirror: yes)."""
    return is_new or status_rank(incoming) > status_rank(current)
