"""/metrics: the Prometheus text of every process's counters plus gauges read at scrape time.

Two kinds of metric (docs/deploy.md, "Metrics and logs"):

- Process metrics (counters, histograms) are defined here and incremented where things happen:
  the gateway after each attempt (`upstream_call_observed`), payouts when a release's outcome is
  recorded (`release_observed`), webhooks when an event is first processed
  (`webhook_processed_observed`). All are counters and histograms, which multiprocess mode sums
  over every file in the directory, dead processes' included (a counter must not go backwards
  when a worker is recycled): there is no live Gauge, so no `multiprocess_mode` to choose and no
  `mark_process_dead` to call; the directory is emptied when the host's processes (re)start.
  With `PROMETHEUS_MULTIPROC_DIR` set in the environment of every web and worker process (before
  they start: prometheus-client chooses its storage at import), each process writes its own
  files there and a scrape sums them; without it, a scrape sees only the process that answers
  it (the embedded default: one process).
- Scrape-time gauges (budget left, queue depth, pending webhook events and their age, payouts
  by state) are read from the database when scraped, once, by the process that answers the
  scrape (so never summed over processes), by the collectors apps add with
  `register_metrics(name, collect)` from their AppConfig.ready(), as with `register_check`.
  Each collector returns metric families and must use a constant number
  of queries; one that raises is reported in `payops_metrics_collector_errors` and skipped.

The endpoint answers a bearer token (`PAYOPS_METRICS_TOKEN`, compared in constant time) or a
signed-in staff member with `staff.view_system_health`; anyone else gets 401 (403 when signed in).
"""

from __future__ import annotations

import hmac
import logging
import os
from collections.abc import Callable, Iterable

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from staff import roles

logger = logging.getLogger(__name__)

Collect = Callable[[], Iterable[Metric]]

# --- Process metrics ------------------------------------------------------------------------

UPSTREAM_CALLS = Counter(
    "payops_upstream_calls",
    "Upstream call attempts, by operation and outcome (ok, or the gateway's error class).",
    ["operation", "outcome"],
)
UPSTREAM_CALL_SECONDS = Histogram(
    "payops_upstream_call_seconds",
    "Upstream call attempts' latency, from the slot being granted to the answer, by operation.",
    ["operation"],
    buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
PAYOUT_RELEASES = Counter(
    "payops_payout_releases",
    "Payout releases (initiations sent upstream) by outcome: accepted (once per payout), "
    "refused (failed), correctable (back to approved), undecided (left submitting, resent).",
    ["outcome"],
)
RELEASE_OUTCOMES = ("accepted", "refused", "correctable", "undecided")
WEBHOOK_PROCESSING_LAG = Histogram(
    "payops_webhook_processing_lag_seconds",
    "Seconds from a webhook event being received to its first successful processing.",
    buckets=(0.1, 0.5, 1.0, 2.5, 5.0, 15.0, 30.0, 60.0, 300.0, 900.0, 3600.0),
)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def upstream_call_observed(
    *, operation: str, failure: BaseException | None, seconds: float
) -> None:
    """Count one upstream attempt and its latency; never raises into the call it measures."""
    try:
        outcome = "ok" if failure is None else _snake(type(failure).__name__)
        name = operation or "other"
        UPSTREAM_CALLS.labels(operation=name, outcome=outcome).inc()
        UPSTREAM_CALL_SECONDS.labels(operation=name).observe(max(0.0, seconds))
    except Exception:
        logger.exception("could not record the upstream call's metrics")


def release_observed(*, outcome: str) -> None:
    """Count one release's outcome (call it on commit of what the release recorded)."""
    try:
        PAYOUT_RELEASES.labels(
            outcome=outcome if outcome in RELEASE_OUTCOMES else "undecided"
        ).inc()
    except Exception:
        logger.exception("could not count the release")


def webhook_processed_observed(*, seconds: float) -> None:
    """Observe one event's lag, received to processed (on commit of its first processing)."""
    try:
        WEBHOOK_PROCESSING_LAG.observe(max(0.0, seconds))
    except Exception:
        logger.exception("could not record the webhook lag")


# --- Scrape-time collectors -----------------------------------------------------------------

COLLECTORS: dict[str, Collect] = {}


def register_metrics(name: str, collect: Collect) -> None:
    """Add (or replace, by name) a scrape-time collector; call it from an AppConfig.ready()."""
    COLLECTORS[name] = collect


def queue_metrics() -> list[Metric]:
    """Tasks waiting in django-q2's queue (the ORM table or the Redis list): one query."""
    from django_q.brokers import get_broker

    family = GaugeMetricFamily("payops_task_queue_depth", "Tasks queued and not taken yet.")
    family.add_metric([], get_broker().queue_size() or 0)
    return [family]


class _Registered:
    """The registered collectors as one prometheus-client collector."""

    def collect(self) -> Iterable[Metric]:
        errors = GaugeMetricFamily(
            "payops_metrics_collector_errors",
            "1 for a scrape-time collector that failed in this scrape.",
            labels=["collector"],
        )
        for name, collect in sorted(COLLECTORS.items()):
            try:
                families = list(collect())
            except Exception:
                logger.exception("metrics collector %s failed", name)
                errors.add_metric([name], 1)
                continue
            errors.add_metric([name], 0)
            yield from families
        yield errors


def multiprocess_dir() -> str:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


def exposition() -> bytes:
    """The whole text: every process's metrics (or this one's), then the scrape-time gauges."""
    directory = multiprocess_dir()
    if directory:
        processes = CollectorRegistry()
        MultiProcessCollector(processes, path=directory)
        base = generate_latest(processes)
    else:
        base = generate_latest(REGISTRY)
    scraped = CollectorRegistry(auto_describe=False)
    scraped.register(_Registered())
    return base + generate_latest(scraped)


# --- The endpoint ---------------------------------------------------------------------------


def _token_matches(request: HttpRequest) -> bool:
    expected = str(getattr(settings, "PAYOPS_METRICS_TOKEN", "") or "")
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.partition(" ")
    if not expected or scheme.lower() != "bearer" or not given:
        return False
    return hmac.compare_digest(given.strip().encode(), expected.encode())


@never_cache
@login_not_required
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus' scrape: a bearer token, or a staff member allowed to see system health."""
    if not _token_matches(request):
        user = request.user
        if not user.is_authenticated:
            refused = HttpResponse(
                "authentication required\n", status=401, content_type="text/plain"
            )
            refused["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return refused
        if not user.has_perm(roles.SYSTEM_HEALTH_VIEW):
            return HttpResponse("forbidden\n", status=403, content_type="text/plain")
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
