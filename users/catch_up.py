"""Catch-up for end users: re-read those whose KYC is not decided yet (webhooks.mirrors)."""

from __future__ import annotations

from gateway.models import Environment
from users.models import EndUser, VerificationStatus
from users.services import end_user_refresh, snapshot
from webhooks.mirrors import CatchUpResult, catch_up_each


def _refresh(end_user: EndUser) -> bool:
    before = snapshot(end_user)
    return snapshot(end_user_refresh(end_user=end_user, by=None)) != before


def end_users_catch_up(*, environment: Environment, limit: int) -> CatchUpResult:
    """
    End users still waiting for a KYC decision, most recently touched first: a decision (and a
    rejection's reasons) that arrived only as an event is taken from the upstream's record.
    """
    waiting = (
        EndUser.objects.filter(
            environment=environment, verification_status=VerificationStatus.NOT_STARTED
        )
        .exclude(upstream_id="")
        .select_related("environment")
        .order_by("-updated_at", "-pk")[:limit]
    )
    return catch_up_each(waiting, _refresh)
