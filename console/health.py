"""Liveness (/healthz) and readiness (/readyz): a registry of checks, each bounded, none raising."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache

from console.models import WorkerHeartbeat

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

CheckResult = dict[str, Any]

# Seconds each check may take before it counts as failed; the probe as a whole stays bounded.
CHECK_TIMEOUT = 3.0


@never_cache
@login_not_required
async def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up and serving requests; touches nothing else."""
    return JsonResponse({"status": "ok"})


async def _database() -> CheckResult:
    def ping() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()

    await sync_to_async(ping)()
    return {"status": "ok", "vendor": connection.vendor}


async def _cache() -> CheckResult:
    key = f"payops:readyz:{uuid.uuid4().hex}"
    await cache.aset(key, "1", timeout=30)
    value = await cache.aget(key)
    await cache.adelete(key)
    if value != "1":
        return {"status": "fail", "detail": "value written was not read back"}
    return {"status": "ok"}


async def _channel_layer() -> CheckResult:
    layer = get_channel_layer()
    if layer is None:
        return {"status": "fail", "detail": "no channel layer configured"}
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "health.ping"})
    message = await layer.receive(channel)
    if message.get("type") != "health.ping":
        return {"status": "fail", "detail": "unexpected message"}
    return {"status": "ok", "backend": type(layer).__name__}


async def _worker() -> CheckResult:
    latest = await WorkerHeartbeat.objects.order_by("-beat_at").afirst()
    limit = settings.PAYOPS_HEARTBEAT_MAX_AGE
    if latest is None:
        return {"status": "fail", "age_seconds": None, "detail": "no heartbeat recorded yet"}
    age = round((timezone.now() - latest.beat_at).total_seconds(), 1)
    status = "ok" if age <= limit else "fail"
    result: CheckResult = {"status": status, "age_seconds": age, "cluster": latest.cluster}
    if status == "fail":
        result["detail"] = f"last heartbeat older than {limit} s"
    return result


@dataclass(frozen=True)
class ReadinessCheck:
    """One named check of /readyz: an async callable returning a CheckResult, and its time limit."""

    name: str
    run: Callable[[], Awaitable[CheckResult]]
    timeout: float | None = None  # None: CHECK_TIMEOUT, read when the check runs
    # What the health page shows: the check's name, and its details' keys, in words.
    label: StrOrPromise = ""
    detail_labels: Mapping[str, StrOrPromise] = field(default_factory=dict)


CHECKS: dict[str, ReadinessCheck] = {}


def register_check(
    name: str,
    run: Callable[[], Awaitable[CheckResult]],
    *,
    timeout: float | None = None,
    label: StrOrPromise = "",
    detail_labels: Mapping[str, StrOrPromise] | None = None,
) -> None:
    """Add (or replace, by name) a readiness check; call it from an AppConfig.ready().

    `run` returns a dict with at least "status": "ok", "fail", or "warning"; other keys are shown
    as details. A "warning" is something a person should look at that does not stop this process
    from serving (no webhook receiver, a quiet payout): /readyz lists it and stays ready. It may
    raise or hang: the probe turns either into a failed check, never into a failed probe.

    `name` is the check's key in /readyz; `label` is what the health page shows (translated),
    and `detail_labels` name its detail keys in words (`{"quiet_for": gettext_lazy("Quiet
    for")}`; `detail`, durations and the console's own keys are named already).
    """
    CHECKS[name] = ReadinessCheck(name, run, timeout, label, dict(detail_labels or {}))


register_check("database", _database, label=gettext_lazy("Database"))
register_check("cache", _cache, label=gettext_lazy("Cache"))
register_check("channel_layer", _channel_layer, label=gettext_lazy("Live updates (channel layer)"))
register_check("worker", _worker, label=gettext_lazy("Background worker"))


async def _run(check: ReadinessCheck) -> CheckResult:
    started = time.monotonic()
    timeout = check.timeout if check.timeout is not None else CHECK_TIMEOUT
    try:
        result = await asyncio.wait_for(check.run(), timeout=timeout)
    except TimeoutError:
        result = {"status": "fail", "detail": f"timed out after {timeout} s"}
    except Exception as exc:  # a probe reports failures, it never raises them
        result = {"status": "fail", "detail": f"{type(exc).__name__}: {exc}"[:300]}
    result["duration_ms"] = round((time.monotonic() - started) * 1000, 1)
    return result


WARNING = "warning"


async def readiness() -> dict[str, Any]:
    """
    Run every check concurrently and sum them up: ok when each one is ok or a warning (the
    warnings are named in "warnings"); anything else fails.
    """
    checks_now = list(CHECKS.values())
    results = await asyncio.gather(*(_run(check) for check in checks_now))
    checks = {check.name: result for check, result in zip(checks_now, results, strict=True)}
    ready = all(r["status"] in ("ok", WARNING) for r in checks.values())
    warnings = sorted(name for name, r in checks.items() if r["status"] == WARNING)
    return {"status": "ok" if ready else "fail", "warnings": warnings, "checks": checks}


@never_cache
@login_not_required
async def readyz(request: HttpRequest) -> JsonResponse:
    """Ready to serve: every registered check answers (database, cache, channels, worker, ...);
    warnings are reported and do not make the process unready."""
    report = await readiness()
    return JsonResponse(report, status=200 if report["status"] == "ok" else 503)
