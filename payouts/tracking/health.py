"""Payouts quiet past their state's expected time (tracking.quiet), and payouts polling reads
later than their cadence: health checks and dashboard.

A warning, not a failure (docs/console.md): the process serves normally, and the payout may
simply be slow. The readiness check `payouts_quiet` names how many and the oldest; the
dashboard panel lists them for finance staff, each with a link to its page. The check
`payouts_polling` names how many open payouts the last polling pass of each environment left
unread a whole cadence past their due time (`polling.due.is_late`): its allowance cannot keep up.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import reduce
from operator import or_
from typing import Any

from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.db.models import Max, Q
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext

from console.health import CheckResult
from gateway.models import Environment
from payouts.models import Payout
from payouts.tracking.quiet import EXPECTED_QUIET, QuietVerdict, quiet_verdict

# At most this many quiet payouts are examined (oldest first); the count says "or more" beyond.
SCAN_LIMIT = 500
LATE_TTL = 2 * 3600  # a pass runs every 5 minutes; an older count is no longer news


@dataclass(frozen=True)
class QuietPayout:
    payout: Payout
    last_news_at: datetime
    verdict: QuietVerdict


def _possibly_quiet(now: datetime) -> Q:
    """Payouts whose last status change is older than their state's shortest time: a necessary
    condition (the last news is never older than the last change, and crypto's CREATED is longer
    than fiat's); the pure decision has the final word."""
    clauses = [Q(status=state, updated_at__lt=now - span) for state, span in EXPECTED_QUIET.items()]
    return reduce(or_, clauses)


def quiet_payouts(*, now: datetime | None = None) -> list[QuietPayout]:
    """Payouts quiet past their expected time, the longest-quiet first."""
    now = now or timezone.now()
    candidates = (
        Payout.objects.filter(_possibly_quiet(now), environment__is_active=True)
        .annotate(last_event_at=Max("events__received_at"))
        .select_related("environment", "recipient")
        .order_by("updated_at", "pk")[:SCAN_LIMIT]
    )
    found = []
    for payout in candidates:
        last_news = max(payout.updated_at, payout.last_event_at or payout.updated_at)
        verdict = quiet_verdict(
            status=payout.status, mode=payout.mode, last_news_at=last_news, now=now
        )
        if verdict is not None:
            found.append(QuietPayout(payout, last_news, verdict))
    found.sort(key=lambda q: q.last_news_at)
    return found


def _duration(value: timedelta) -> str:
    minutes = int(value.total_seconds() // 60)
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def quiet_report() -> CheckResult:
    found = quiet_payouts()
    if not found:
        return {"status": "ok", "detail": "no payout is quiet past its state's expected time"}
    oldest = found[0]
    count = f"{len(found)}{'+' if len(found) >= SCAN_LIMIT else ''}"
    return {
        "status": "warning",
        "detail": (
            f"{count} payout{'s' if len(found) != 1 else ''} quiet past the expected time of "
            f"their state; the longest: payout {oldest.payout.pk} ({oldest.payout.environment.name}"
            f"), {oldest.payout.get_status_display()} with no news for "
            f"{_duration(oldest.verdict.quiet_for)} (expected within "
            f"{_duration(oldest.verdict.expected)})"
        ),
    }


async def quiet_check() -> CheckResult:
    return await sync_to_async(quiet_report)()


def quiet_panel_context(request: HttpRequest) -> dict[str, Any]:
    found = quiet_payouts()
    return {
        "quiet": [
            {
                "payout": q.payout,
                "quiet_for": _duration(q.verdict.quiet_for),
                "expected": _duration(q.verdict.expected),
            }
            for q in found[:10]
        ],
        "more": max(0, len(found) - 10),
    }


def _late_key(environment_id: int) -> str:
    return f"payouts:poll:late:{environment_id}"


def polling_late_record(environment: Environment, *, late: int, now: datetime) -> None:
    """What a polling pass left late (the cache is shared by the worker and the web processes)."""
    cache.set(_late_key(environment.pk), (late, now), LATE_TTL)


def polling_late_report() -> CheckResult:
    environments = list(Environment.objects.filter(is_active=True).order_by("pk"))
    found = cache.get_many([_late_key(env.pk) for env in environments])
    late = []
    for env in environments:
        count, at = found.get(_late_key(env.pk), (0, None))
        if count:
            late.append(
                gettext("%(count)s in %(environment)s (pass at %(at)s UTC)")
                % {"count": count, "environment": env.name, "at": f"{at:%Y-%m-%d %H:%M}"}
            )
    if not late:
        return {
            "status": "ok",
            "detail": gettext("polling reads every open payout within its cadence"),
        }
    return {
        "status": "warning",
        "detail": gettext(
            "open payouts read later than their state's cadence (unread a whole cadence past "
            "their due time; polling's allowance cannot keep up): %(late)s"
        )
        % {"late": "; ".join(late)},
    }


async def polling_late_check() -> CheckResult:
    return await sync_to_async(polling_late_report)()
