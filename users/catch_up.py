"""Catch-up for end users: re-read those whose KYC is not decided yet (webhooks.mirrors)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet

from gateway.models import Environment
from users.models import EndUser, UpstreamMirror, VerificationStatus
from users.services import END_USER, end_user_refresh
from webhooks.mirrors import CatchUpResult, catch_up_each


def catch_up_refreshing[M: UpstreamMirror](
    rows: QuerySet[M],
    *,
    order: tuple[str, ...],
    limit: int,
    refresh: Callable[[M], M],
    state: Callable[[M], Any],
) -> CatchUpResult:
    """Re-read the first `limit` of `rows` known upstream, in `order`; a record counts as
    changed when its `state` moved."""

    def changed(record: M) -> bool:
        before = state(record)
        return bool(state(refresh(record)) != before)

    due = rows.exclude(upstream_id="").select_related("environment").order_by(*order)[:limit]
    return catch_up_each(due, changed)


def end_users_catch_up(*, environment: Environment, limit: int) -> CatchUpResult:
    """
    End users still waiting for a KYC decision, most recently touched first: a decision (and a
    rejection's reasons) that arrived only as an event is taken from the upstream's record.
    """
    return catch_up_refreshing(
        EndUser.objects.filter(
            environment=environment, verification_status=VerificationStatus.NOT_STARTED
        ),
        order=("-updated_at", "-pk"),
        limit=limit,
        refresh=lambda end_user: end_user_refresh(end_user=end_user, by=None),
        state=END_USER.snapshot,
    )
