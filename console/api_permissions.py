"""Each API operation states its permission where it lives: `@needs(...)` under its route.

    @router.post("/payouts/{payout_id}/reject", ...)
    @needs(roles.PAYOUT_APPROVE)
    def payout_reject(request, payout_id: int, payload: RejectIn) -> PayoutOut: ...

The API root (config/api.py) reads the declaration when it mounts the app's router and gives the
operation an auth step that refuses a caller without one of the permissions (403) before ninja
parses anything; an operation that declares none stops the start-up. The services check again:
they are not the only callers. `@needs()` with no permission: any staff member.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

View = TypeVar("View", bound=Callable[..., Any])

# What an operation needs: any one of these permissions; () is any staff member.
Need = tuple[str, ...]
_DECLARED = "payops_api_need"


def needs(*permissions: str) -> Callable[[View], View]:
    """Declare the permissions (any one of them) an API operation needs."""

    def declare(view: View) -> View:
        setattr(view, _DECLARED, tuple(permissions))
        return view

    return declare


def declared_need(view: Callable[..., Any]) -> Need | None:
    """What `view` declared with `needs`, or None when it declared nothing."""
    return getattr(view, _DECLARED, None)
