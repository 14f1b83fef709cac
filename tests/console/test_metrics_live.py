"""/metrics after real work: a payout released through the emulator over HTTP and its webhook
events received by our receiver and processed; every family of the issue carries what we caused."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.conf import Conf
from django_q.tasks import async_task

from gateway.client import call_sync, upstream
from payouts.approval.services import payout_approve
from payouts.models import PayoutStatus
from payouts.release.code import payout_otp_confirm, payout_otp_send
from payouts.release.initiation import payouts_recover_submitting
from staff import crypto
from staff.models import StaffUser
from tests.console.test_metrics import TOKEN, sample, scrape
from tests.gateway.conftest import _fresh_shared_state as _fresh_shared_state
from tests.gateway.conftest import live_emulator as live_emulator
from tests.gateway.conftest import sandbox as sandbox
from tests.payouts.conftest import q_sync as q_sync
from tests.payouts.conftest import staff as staff
from tests.payouts.conftest import world as world
from tests.payouts.live import World, submitted_payout
from tests.payouts.test_tracking_live import Collector
from tests.servers import serve_in_thread
from webhooks.models import EventStatus, WebhookEndpoint, WebhookEvent

SECRET = "whsec_metrics-live-test-secret"

# Every family the "standard signals" lists, by name.
FAMILIES = {
    "payops_upstream_calls",  # upstream calls by operation and outcome
    "payops_upstream_call_seconds",  # and their latency
    "payops_upstream_budget_left",  # budget left, per environment
    "payops_task_queue_depth",  # queue depth: django-q2's queued tasks
    "payops_webhook_events_pending",  # queue depth: webhook events still to process
    "payops_webhook_processing_lag_seconds",  # webhook lag, received -> processed
    "payops_webhook_oldest_pending_seconds",  # webhook lag, the oldest pending
    "payops_payouts",  # payouts by state, per environment
    "payops_payout_releases",  # releases by outcome
}


@pytest.fixture
def hooks(world: World) -> Iterator[Collector]:
    """The emulator delivers its events to a collector; the test hands them to our receiver."""
    collector = Collector()
    with serve_in_thread(collector, lifespan="off") as url:
        call_sync(
            upstream(world.environment).webhooks.register,
            webhook_url=f"{url}/hook",
            secret=SECRET,
            client_uuid=world.environment.client_id,
        )
        yield collector


def receive(endpoint: WebhookEndpoint, body: dict[str, Any]) -> None:
    raw = json.dumps(body, separators=(",", ":")).encode()
    signature = hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
    response = Client().post(
        f"/webhooks/in/{endpoint.receiver_id}/",
        data=raw,
        content_type="application/json",
        headers={"x-signature-sha256": signature},
    )
    assert response.status_code == 200, response.content


def test_every_signal_after_a_released_payout_and_its_events(
    world: World, staff: dict[str, StaffUser], hooks: Collector, settings: Any
) -> None:
    settings.PAYOPS_METRICS_TOKEN = TOKEN
    environment = {"environment": world.environment.name}
    before = scrape()

    # A payout made, approved and released: initiated upstream once (q_sync runs the task).
    payout = submitted_payout(world, maker=staff["maker"], amount="100.02")
    payout_approve(payout=payout, by=staff["approver"])
    payout_otp_send(payout=payout, by=staff["approver"])
    payout = payout_otp_confirm(payout=payout, by=staff["approver"], code=world.otp_code())
    assert payout.status == PayoutStatus.CREATED
    payouts_recover_submitting()  # nothing stuck: no second release is counted

    # Its events, delivered by the emulator, received and processed by ours (inline on commit).
    endpoint = WebhookEndpoint.objects.create(
        environment=world.environment,
        secret_encrypted=crypto.encrypt(SECRET),
        secret_set_at=timezone.now(),
    )
    world.tick(times=4)
    world.emulator.control("POST", "webhooks/flush")
    events = [b for b in hooks.bodies if b["event"].startswith("payout.")]
    assert events
    for body in events:
        receive(endpoint, body)
    processed = WebhookEvent.objects.filter(status=EventStatus.PROCESSED).count()
    assert processed >= 1
    payout.refresh_from_db()
    assert payout.status == PayoutStatus.COMPLETED  # 100.02: the sandbox completes it
    # One event still waiting, ten minutes old: the oldest pending and the pending count.
    WebhookEvent.objects.create(
        environment=world.environment,
        event_id="evt_waiting",
        event_type="payout.created",
        payload={},
        status=EventStatus.PENDING,
        received_at=timezone.now() - timedelta(minutes=10),
    )
    # One task queued for a worker (none runs here), then taken out again.
    broker = get_broker()
    queued_before = broker.queue_size() or 0
    try:
        Conf.SYNC = False
        async_task(payouts_recover_submitting)
        Conf.SYNC = True

        after = scrape()
    finally:
        Conf.SYNC = True
        broker.purge_queue()

    assert set(after) >= FAMILIES, FAMILIES - set(after)
    for family in FAMILIES:
        assert after[family].documentation, family  # HELP text

    def grew(name: str, sample_name: str, **labels: str) -> float:
        return sample(after, name, sample_name, **labels) - sample(
            before, name, sample_name, **labels
        )

    # Upstream calls: the initiation, counted once, timed once.
    calls, seconds = "payops_upstream_calls", "payops_upstream_call_seconds"
    assert grew(calls, calls + "_total", operation="payout_initiate", outcome="ok") == 1
    assert grew(seconds, seconds + "_count", operation="payout_initiate") == 1
    assert grew(seconds, seconds + "_sum", operation="payout_initiate") > 0
    # Budget left: this week's budget less every call the call log holds for the environment.
    from gateway.models import UpstreamCall

    made = UpstreamCall.objects.filter(environment=world.environment).count()
    budget = sample(after, "payops_upstream_budget", "payops_upstream_budget", **environment)
    left = "payops_upstream_budget_left"
    assert budget > 0 and sample(after, left, left, **environment) == budget - made
    # Releases by outcome: one accepted, nothing else.
    releases = "payops_payout_releases"
    assert grew(releases, releases + "_total", outcome="accepted") == 1
    assert grew(releases, releases + "_total", outcome="undecided") == 0
    # Payouts by state in this environment: the one payout, completed.
    states = {
        s.labels["state"]: s.value
        for s in after["payops_payouts"].samples
        if s.labels["environment"] == world.environment.name
    }
    assert states[PayoutStatus.COMPLETED] == 1 and sum(states.values()) == 1
    # Webhook lag: each processed event observed once (first processing only).
    lag = "payops_webhook_processing_lag_seconds"
    assert grew(lag, lag + "_count") == processed
    assert sample(after, "payops_webhook_events_pending", "payops_webhook_events_pending") == 1
    oldest = "payops_webhook_oldest_pending_seconds"
    assert 600 <= sample(after, oldest, oldest) < 3600
    # Queue depth: the task we queued.
    depth = "payops_task_queue_depth"
    assert sample(after, depth, depth) == queued_before + 1
