"""Missed events, silence while objects are in flight, drift on the dashboard, retention."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from tests.webhooks.conftest import new_event
from webhooks.models import MissedEvent, WebhookDelivery, WebhookEvent
from webhooks.services import missed_event_record, silences, webhook_deliveries_prune

pytestmark = pytest.mark.django_db


def test_a_state_change_without_its_event_is_recorded_as_missed(endpoint) -> None:
    missed = missed_event_record(
        environment=endpoint.environment,
        object_kind="payout",
        upstream_id="p-5",
        previous_state="PROCESSING",
        observed_state="COMPLETED",
        expected_event="payout.completed",
        source="payout poll",
    )

    assert missed is not None and MissedEvent.objects.get() == missed


def test_a_change_whose_event_did_arrive_is_not_missed(post_signed, endpoint) -> None:
    post_signed(new_event("payout.completed", payout_id="p-6", status="COMPLETED"))

    missed = missed_event_record(
        environment=endpoint.environment,
        object_kind="payout",
        upstream_id="p-6",
        observed_state="completed",
        source="payout poll",
    )

    assert missed is None and MissedEvent.objects.count() == 0


def test_silence_is_reported_only_while_objects_are_in_flight(
    post_signed, endpoint, settings
) -> None:
    settings.WEBHOOKS_SILENCE_MINUTES = 30
    post_signed(new_event("payout.created", payout_id="p-1", status="CREATED"))
    assert silences() == []  # a valid event just arrived

    later = timezone.now() + timedelta(minutes=31)
    (silence,) = silences(now=later)
    assert silence.environment == endpoint.environment and silence.in_flight == 1

    post_signed(new_event("payout.completed", payout_id="p-1", status="COMPLETED"))
    assert silences(now=timezone.now() + timedelta(minutes=31)) == []


def test_dashboard_shows_drift_count_and_silence(client_for, post_signed, settings) -> None:
    settings.WEBHOOKS_SILENCE_MINUTES = 0
    post_signed(new_event("payout.created", payout_id="p-2", status="SPLIT", extra_field=1))
    post_signed(new_event("mystery.event"))

    html = client_for("admin").get("/").content.decode()

    assert 'data-testid="drift-count">2<' in html
    assert "unexpected_field: 1" in html and "unknown_status: 1" in html
    assert 'data-testid="webhook-silence"' in html


def test_prune_deletes_old_deliveries_and_keeps_events(post_signed, settings) -> None:
    settings.WEBHOOKS_DELIVERY_RETENTION_DAYS = 30
    post_signed(new_event("user.created", user_id="u1"))
    post_signed(new_event("user.created", user_id="u2"))
    old = WebhookDelivery.objects.order_by("id").first()
    WebhookDelivery.objects.filter(pk=old.pk).update(
        received_at=timezone.now() - timedelta(days=31)
    )

    assert webhook_deliveries_prune() == 1
    assert WebhookDelivery.objects.count() == 1
    assert WebhookEvent.objects.count() == 2

    out = StringIO()
    call_command("webhooks", "prune", "--days", "0", stdout=out)
    assert "Pruned 1 deliveries" in out.getvalue()
    assert WebhookEvent.objects.count() == 2


def test_the_payouts_poller_spelling_is_accepted_too(endpoint) -> None:
    missed = missed_event_record(
        environment=endpoint.environment,
        event_type="payout.status_changed",
        object_id="p-9",
        detail={"upstream_id": "p-9", "status": "FAILED", "event_type": "payout.status_changed"},
    )

    assert missed is not None
    assert (missed.object_kind, missed.upstream_id, missed.observed_state) == (
        "payout",
        "p-9",
        "FAILED",
    )
    assert missed.expected_event == "payout.status_changed"
