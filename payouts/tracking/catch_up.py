"""Catch-up for payouts: re-read those the upstream still moves, and apply what changed.

Registered with webhooks.mirrors from PayoutsConfig.ready(). Each payout is one GET in the
gateway's background priority; the answer goes through `payout_apply_report`, the same apply
service as events and polling (recorded once, moved only as the state table allows). A change
found this way is recorded as found by reading back (source "poll"), so the webhooks inspector
also lists it as a missed event, which it was.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from gateway.client import call_sync, upstream
from gateway.models import Environment
from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.tracking.events import payout_apply_report
from payouts.tracking.upstream_status import UnreadableStatus, upstream_status
from webhooks.mirrors import CatchUpResult, catch_up_each

S = PayoutStatus

# Submitted upstream and not settled: the upstream still owes news about these.
UPSTREAM_OPEN = frozenset({S.CREATED, S.PENDING, S.PROCESSING, S.IN_REVIEW, S.KYT_PENDING})


def open_payout_ids(environment: Environment) -> list[str]:
    """Upstream ids of the environment's payouts in flight upstream (silence is judged on them)."""
    return [
        str(upstream_id)
        for upstream_id in Payout.objects.filter(environment=environment, status__in=UPSTREAM_OPEN)
        .exclude(upstream_id=None)
        .values_list("upstream_id", flat=True)[:5000]
    ]


def _due(environment: Environment, limit: int) -> list[Payout]:
    """Open payouts newest first, then completed ones still watched for a return; chosen before
    any is re-read, so a payout that completes on the way is not read twice."""
    mine = (
        Payout.objects.filter(environment=environment)
        .exclude(upstream_id=None)
        .select_related("environment")
        .order_by("-updated_at", "-pk")
    )
    watched_since = timezone.now() - timedelta(days=settings.PAYOUTS_RETURN_WATCH_DAYS)
    due = list(mine.filter(status__in=UPSTREAM_OPEN)[:limit])
    if len(due) < limit:
        due += mine.filter(status=S.COMPLETED, updated_at__gte=watched_since)[: limit - len(due)]
    return due


def _refresh(payout: Payout) -> bool:
    client = upstream(payout.environment, background=True)
    record = call_sync(client.payouts.get, str(payout.upstream_id))
    raw = record.model_dump(mode="json")
    try:
        report = upstream_status(raw)
    except UnreadableStatus:
        return False
    moved = payout_apply_report(
        environment=payout.environment,
        report=report,
        source=ChangeSource.POLL,
        event_type="catch_up",
        data=raw,
    )
    return moved is not None and moved.status != payout.status


def payouts_catch_up(*, environment: Environment, limit: int) -> CatchUpResult:
    """Re-read at most `limit` payouts (see `_due`) and apply each one's upstream status."""
    return catch_up_each(_due(environment, limit), _refresh)
