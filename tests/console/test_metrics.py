"""/metrics: text that parses, values we caused, who may read it, every process summed."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from gateway.client import call_sync, upstream
from gateway.models import Environment, UpstreamCall
from tests.finance import make_draft, make_staff
from tests.finance import make_environment as offline_environment
from tests.gateway.conftest import LiveEmulator, make_environment
from tests.gateway.conftest import live_emulator as live_emulator  # the fixture, reused
from tests.identity import client_signed_in

TOKEN = "scrape-token-for-tests-0123456789"


def scrape(client: Client | None = None) -> dict[str, Any]:
    """The families of one scrape with the token, by name."""
    response = (client or Client()).get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return {f.name: f for f in text_string_to_metric_families(response.content.decode())}


def sample(families: dict[str, Any], name: str, sample_name: str, **labels: str) -> float:
    """The value of one sample (0 when absent: a counter not incremented yet)."""
    for s in families[name].samples if name in families else []:
        if s.name == sample_name and all(s.labels.get(k) == v for k, v in labels.items()):
            return float(s.value)
    return 0.0


@pytest.fixture
def token(settings: Any) -> str:
    settings.PAYOPS_METRICS_TOKEN = TOKEN
    return TOKEN


def test_an_upstream_call_is_counted_timed_and_spends_the_budget(
    token: str, live_emulator: LiveEmulator
) -> None:
    sandbox: Environment = make_environment(live_emulator)
    before = scrape()

    call_sync(upstream(sandbox).quotations.create, quote_currency="MXN", amount=100)

    after = scrape()
    operations = list(UpstreamCall.objects.values_list("operation", flat=True))
    assert len(operations) == 2  # /auth, then the quotation
    for operation in set(operations):
        made = operations.count(operation)
        key = {"operation": operation, "outcome": "ok"}
        calls = "payops_upstream_calls"
        assert (
            sample(after, calls, calls + "_total", **key)
            - sample(before, calls, calls + "_total", **key)
            == made
        )
        seconds = "payops_upstream_call_seconds"
        assert (
            sample(after, seconds, seconds + "_count", operation=operation)
            - sample(before, seconds, seconds + "_count", operation=operation)
            == made
        )
    env = {"environment": sandbox.name}
    assert sample(after, "payops_upstream_budget", "payops_upstream_budget", **env) == 10_000
    assert sample(after, "payops_upstream_budget_used", "payops_upstream_budget_used", **env) == 2
    assert sample(after, "payops_upstream_budget_left", "payops_upstream_budget_left", **env) == (
        9_998
    )


def test_payouts_by_state_webhook_lag_and_queue_depth(token: str, db: None) -> None:
    from webhooks.models import EventStatus, WebhookEvent

    maker = make_staff("finance_maker")
    environment = offline_environment()
    make_draft(maker=maker, environment=environment)
    make_draft(maker=maker, environment=environment)
    now = timezone.now()
    for n, (status, age) in enumerate(
        [(EventStatus.PENDING, 600), (EventStatus.PENDING, 30), (EventStatus.PROCESSED, 5)]
    ):
        WebhookEvent.objects.create(
            environment=environment,
            event_id=f"evt_{n}",
            event_type="payout",
            payload={},
            status=status,
            received_at=now - timedelta(seconds=age),
        )

    families = scrape()

    env = {"environment": environment.name}
    assert sample(families, "payops_payouts", "payops_payouts", state="draft", **env) == 2
    assert sample(families, "payops_payouts", "payops_payouts", state="completed", **env) == 0
    # pending: the two pending events; the processed one is not waiting
    pending = "payops_webhook_events_pending"
    assert sample(families, pending, pending) == 2
    oldest = sample(
        families, "payops_webhook_oldest_pending_seconds", "payops_webhook_oldest_pending_seconds"
    )
    assert 600 <= oldest < 3600
    last = sample(
        families, "payops_webhook_last_received_seconds", "payops_webhook_last_received_seconds"
    )
    assert 5 <= last < 600
    assert "payops_task_queue_depth" in families
    errors = families["payops_metrics_collector_errors"].samples
    assert {s.labels["collector"] for s in errors} >= {
        "console.queue",
        "gateway.budget",
        "payouts.states",
        "webhooks.lag",
    }
    assert all(s.value == 0 for s in errors)


def test_a_scrape_reads_a_constant_number_of_queries(token: str, db: None) -> None:
    maker = make_staff("finance_maker")

    def counted() -> int:
        with CaptureQueriesContext(connection) as queries:
            scrape()
        return len(queries)

    first = offline_environment("First")
    make_draft(maker=maker, environment=first)
    few = counted()
    for n in range(3):
        environment = offline_environment(f"Sandbox {n}")
        for _ in range(2):
            make_draft(maker=maker, environment=environment)
    assert counted() == few


def test_who_may_read_it(settings: Any, demo_staff: dict[str, Any]) -> None:
    settings.PAYOPS_METRICS_TOKEN = TOKEN
    anonymous = Client().get("/metrics")
    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 401
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200
    # Signed-in staff: system health's permission decides (admin and auditor hold it).
    assert client_signed_in(demo_staff["finance_maker"]).get("/metrics").status_code == 403
    assert client_signed_in(demo_staff["auditor"]).get("/metrics").status_code == 200
    assert client_signed_in(demo_staff["admin"]).get("/metrics").status_code == 200


def test_no_token_configured_means_no_token_is_accepted(settings: Any, db: None) -> None:
    settings.PAYOPS_METRICS_TOKEN = ""
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 401
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer x").status_code == 401


CHILD = """
import django
django.setup()
from console import metrics
metrics.upstream_call_observed(operation="child_op", failure=None, seconds=0.2)
metrics.upstream_call_observed(operation="child_op", failure=TimeoutError(), seconds=3)
metrics.release_observed(outcome="accepted")
metrics.webhook_processed_observed(seconds=1.5)
"""


def test_multiprocess_mode_sums_what_other_processes_wrote(
    token: str, db: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "prometheus"
    directory.mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "PYTHONPATH": str(settings.BASE_DIR),
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
    }
    for _ in range(2):  # two processes, each writing its own files
        subprocess.run(
            [sys.executable, "-c", CHILD], env=env, check=True, cwd=settings.BASE_DIR, timeout=120
        )
    assert len(list(directory.glob("*.db"))) >= 2
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(directory))

    families = scrape()

    calls = "payops_upstream_calls"
    assert sample(families, calls, calls + "_total", operation="child_op", outcome="ok") == 2
    assert (
        sample(families, calls, calls + "_total", operation="child_op", outcome="timeout_error")
        == 2
    )
    seconds = "payops_upstream_call_seconds"
    assert sample(families, seconds, seconds + "_count", operation="child_op") == 4
    assert sample(families, seconds, seconds + "_sum", operation="child_op") == pytest.approx(6.4)
    releases = "payops_payout_releases"
    assert sample(families, releases, releases + "_total", outcome="accepted") == 2
    lag = "payops_webhook_processing_lag_seconds"
    assert sample(families, lag, lag + "_count") == 2
    assert sample(families, lag, lag + "_sum") == pytest.approx(3.0)
    # The scrape-time gauges come with them, once.
    assert "payops_payouts" in families
