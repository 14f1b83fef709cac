"""A payout's initiation waiting to be sent again: recorded on the payout, broadcast, put in words.

Under the upstream's rate limit (or its errors) one send can take a while: the gateway waits out
each 429's Retry-After and backs off between attempts, and after its last attempt the recovery
schedule sends again with the same key. The person who released the payout sees each of these
waits on the payout page ("Waiting for the upstream's rate limit: attempt 3, next try at …")
and in the API, instead of a page that says "Submitting" and nothing else.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from console.templatetags.ui import when
from gateway.errors import BudgetExhausted, RateLimited, ServerError, UpstreamError
from gateway.service_errors import unanswered
from payouts import live
from payouts.models import Payout, PayoutStatus, UpstreamWait

WAIT_FIELDS = (
    "upstream_wait",
    "upstream_wait_attempt",
    "upstream_wait_until",
    "upstream_wait_since",
)


def wait_reason(failure: UpstreamError) -> UpstreamWait:
    if isinstance(failure, RateLimited):
        return UpstreamWait.RATE_LIMIT
    if isinstance(failure, BudgetExhausted):
        return UpstreamWait.BUDGET
    if isinstance(failure, ServerError):
        return UpstreamWait.SERVER_ERROR
    return UpstreamWait.NO_ANSWER


def recovery_due(payout: Payout) -> datetime:
    """When the recovery schedule (every minute) sends a payout quiet for the stale delay."""
    last = payout.last_submit_at or payout.submitting_since or timezone.now()
    return last + timedelta(seconds=settings.PAYOUTS_SUBMITTING_STALE_SECONDS + 60)


def wait_record(*, payout: Payout, failure: UpstreamError, attempt: int, until: datetime) -> None:
    """Note the wait on a payout still `submitting` and tell open pages (after commit)."""
    values = {
        "upstream_wait": wait_reason(failure),
        "upstream_wait_attempt": attempt,
        "upstream_wait_until": until,
        "upstream_wait_since": timezone.now(),
    }
    with transaction.atomic():
        if Payout.objects.filter(pk=payout.pk, status=PayoutStatus.SUBMITTING).update(**values):
            for name, value in values.items():
                setattr(payout, name, value)
            live.payout_changed(payout)


def wait_cleared(payout: Payout) -> list[str]:
    """Clear the wait on the instance (the upstream answered); the fields for `save`."""
    payout.upstream_wait = UpstreamWait.NONE
    payout.upstream_wait_attempt = 0
    payout.upstream_wait_until = None
    payout.upstream_wait_since = None
    return list(WAIT_FIELDS)


def gave_up_message(failure: UpstreamError, due: datetime) -> str:
    """The initiation's last problem when the gateway stopped: what, and what happens next."""
    return (
        f"{unanswered(failure)}. Nothing is lost: PayOps sends it again with the same key "
        f"by about {when(due, 'seconds')}, or an approver re-sends it now."
    )


def wait_text(payout: Payout) -> str:
    """The wait in words, or "" when the payout is not waiting."""
    if payout.status != PayoutStatus.SUBMITTING or not payout.upstream_wait:
        return ""
    label = UpstreamWait(payout.upstream_wait).label
    at = when(payout.upstream_wait_until, "seconds")
    if payout.upstream_wait_attempt:
        return gettext(
            "Waiting for %(label)s: attempt %(upstream_wait_attempt)s, next try at %(at)s."
        ) % {"label": label, "upstream_wait_attempt": payout.upstream_wait_attempt, "at": at}
    return gettext("Waiting for %(label)s: the next try (same key) comes by about %(at)s.") % {
        "label": label,
        "at": at,
    }
