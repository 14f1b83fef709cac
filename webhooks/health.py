"""Readiness warnings of webhooks: an environment without a receiver, and silence while in flight.

Both are "warning", not "fail" (docs/console.md): the web process serves pages and the API
normally, and taking it out of a load balancer would not bring one event back. They say what
to do instead, and the dashboard panel shows the same.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async

from console.health import CheckResult
from webhooks.services.gaps import receivers_missing, silences


def receivers_report() -> CheckResult:
    missing = receivers_missing()
    if not missing:
        return {"status": "ok", "detail": "every environment in use has a receiver registered"}
    return {
        "status": "warning",
        "detail": "; ".join(
            f"{environment.name}: no webhook receiver registered, so nothing pushes its events "
            "(register it: Admin → Webhook events → Endpoints, or manage.py webhooks register "
            f'--environment "{environment.name}")'
            for environment in missing
        ),
    }


def silence_report() -> CheckResult:
    found = silences()
    if not found:
        return {"status": "ok", "detail": "events arrive, or nothing is in flight"}
    return {
        "status": "warning",
        "detail": "; ".join(
            f"{s.environment.name}: no valid event for more than {s.minutes} minutes while "
            f"{s.in_flight} object{'s are' if s.in_flight != 1 else ' is'} in flight"
            for s in found
        ),
    }


async def receivers_check() -> CheckResult:
    return await sync_to_async(receivers_report)()


async def silence_check() -> CheckResult:
    return await sync_to_async(silence_report)()
