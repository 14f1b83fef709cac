"""The one body of a payout API action: find it, call the service, map a refusal, answer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from ninja import Field, Schema

from config.api_support import ErrorOut, FieldErrorOut
from payouts import selectors
from payouts.errors import PayoutActionRefused
from payouts.models import Payout
from payouts.services import PayoutInvalid
from payouts.waiting import wait_text
from quotes.api import environment_of, staff_of
from staff.models import StaffUser


class UpstreamWaitOut(Schema):
    """The initiation waits to be sent again (same key): why, which attempt, when."""

    reason: str = Field(
        description="rate_limit, no_answer, server_error or budget (PayOps's own limiter)."
    )
    attempt: int = Field(description="The gateway's next attempt; 0: the recovery's next send.")
    next_try_at: datetime | None
    since: datetime | None
    message: str = Field(description="The same in words, as the payout page shows it.")


def upstream_wait_out(payout: Payout) -> UpstreamWaitOut | None:
    message = wait_text(payout)
    if not message:
        return None
    return UpstreamWaitOut(
        reason=payout.upstream_wait,
        attempt=payout.upstream_wait_attempt,
        next_try_at=payout.upstream_wait_until,
        since=payout.upstream_wait_since,
        message=message,
    )


def error(code: str, message: str, errors: dict[str, list[str]] | None = None) -> ErrorOut:
    return ErrorOut(
        code=code,
        message=message,
        errors=[
            FieldErrorOut(field=name, message=text)
            for name, texts in (errors or {}).items()
            for text in texts
        ],
    )


def invalid(exc: PayoutInvalid) -> tuple[int, ErrorOut]:
    """A draft the rules refuse: 409 for a state conflict, 503 when the upstream did not answer."""
    if exc.code == "upstream_unavailable":
        # Nothing changed: the message says what happened and that the same request may be
        # sent again; no field is at fault.
        return 503, error(exc.code, " ".join(exc.errors.get("", [])) or str(exc))
    status = 409 if exc.code in ("duplicate_needs_confirmation", "not_a_draft") else 400
    return status, error(exc.code, "The payout request was refused.", exc.errors)


def refused(exc: PayoutActionRefused) -> tuple[int, ErrorOut]:
    """A maker-checker or initiation action refused: the exception carries its own status."""
    return exc.status, error(exc.code, exc.message, {exc.field: [exc.message]} if exc.field else {})


def forbidden(exc: PermissionDenied) -> tuple[int, ErrorOut]:
    return 403, error("permission_denied", str(exc) or "Not allowed.")


def not_found() -> tuple[int, ErrorOut]:
    return 404, error("not_found", "No such payout in this environment.")


def find_payout(request: HttpRequest, payout_id: int, environment: str | None) -> Payout | None:
    """The payout in the request's environment (`?environment=` or the caller's), else None."""
    try:
        return selectors.payout_detail(
            environment=environment_of(request, environment), pk=payout_id
        )
    except Payout.DoesNotExist:
        return None


def payout_action[T](
    request: HttpRequest,
    payout_id: int,
    environment: str | None,
    act: Callable[[StaffUser, Payout], T],
    respond: Callable[[T, Payout], tuple[int, Any]],
) -> tuple[int, Any]:
    """
    Find the payout or 404, `act(user, payout)` (the service call), answer `respond(result,
    payout)`. The service's refusals become the one error shape: PermissionDenied 403,
    PayoutActionRefused its own status, PayoutInvalid 400/409/503.
    """
    user = staff_of(request)
    payout = find_payout(request, payout_id, environment)
    if payout is None:
        return not_found()
    try:
        result = act(user, payout)
    except PermissionDenied as exc:
        return forbidden(exc)
    except PayoutActionRefused as exc:
        return refused(exc)
    except PayoutInvalid as exc:
        return invalid(exc)
    return respond(result, payout)
