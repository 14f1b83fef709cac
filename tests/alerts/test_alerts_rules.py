"""Alerts without the emulator: the kinds that read PayOps's own records (contract drift,
sign-in failures), exactly one open alert per rule and subject, retries of a failed delivery,
the daily digest, rules' validation and audit, the secret webhook URL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone

from alerts.delivery import deliveries_retry_due, digest_send
from alerts.models import Alert, AlertDelivery, AlertRule, AlertState, DeliveryState
from alerts.services import (
    alert_fire,
    alerts_evaluate,
    rule_create,
    rule_set_enabled,
    rule_update,
    subscription_set,
)
from staff.bootstrap import DEMO_PASSWORD
from staff.crypto import ENCRYPTED_FIELDS
from staff.errors import ServiceError
from staff.models import AuditEntry, StaffUser
from tests.alerts.receiver import Receiver
from tests.finance import make_environment
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(demo_staff: dict[str, StaffUser]) -> StaffUser:
    return demo_staff["admin"]


@pytest.fixture
def approver(demo_staff: dict[str, StaffUser]) -> StaffUser:
    return demo_staff["finance_approver"]


def later(**delta: Any) -> Any:
    return timezone.now() + timedelta(**delta)


def drifting_event(environment: Any, n: int) -> WebhookEvent:
    return WebhookEvent.objects.create(
        environment=environment,
        event_id=f"evt-{n}",
        event_type="payout.status_changed",
        payload={"event": "payout.status_changed"},
        drift=[{"kind": "unknown_field", "field": "data.surprise"}],
        has_drift=True,
    )


def test_contract_drift_fires_once_to_email_and_webhook_and_resolves_after_its_window(
    admin: StaffUser,
    approver: StaffUser,
    receiver: Receiver,
    django_capture_on_commit_callbacks: Any,
) -> None:
    environment = make_environment()
    rule = rule_create(
        by=admin,
        name="Drift",
        kind="webhook_drift",
        thresholds={"events": 2, "window_minutes": 30},
        environment=environment,
        webhook_url=receiver.url,
    )
    subscription_set(user=approver, rule=rule, mode="immediate")
    drifting_event(environment, 1)
    with django_capture_on_commit_callbacks(execute=True):
        alerts_evaluate()
    assert not Alert.objects.exists()  # one drifting event: below the threshold of two
    drifting_event(environment, 2)
    with django_capture_on_commit_callbacks(execute=True):
        alerts_evaluate()
        alerts_evaluate()
    (alert,) = Alert.objects.all()
    assert alert.state == AlertState.OPEN and "2 webhook events drift" in alert.summary
    assert len(mail.outbox) == 1 and mail.outbox[0].to == [approver.email]
    assert len(receiver.posts) == 1 and alert.summary in receiver.posts[0]["text"]
    with django_capture_on_commit_callbacks(execute=True):
        alerts_evaluate(now=later(minutes=31))  # both events are out of the window
        alerts_evaluate(now=later(minutes=31))
    alert.refresh_from_db()
    assert alert.state == AlertState.RESOLVED
    assert len(mail.outbox) == 2 and mail.outbox[1].subject.startswith("[PayOps] Resolved: ")
    assert len(receiver.posts) == 2 and receiver.posts[1]["text"].startswith("Resolved: ")


def test_repeated_sign_in_failures_fire_per_account_and_resolve_when_forgotten(
    admin: StaffUser,
    approver: StaffUser,
    receiver: Receiver,
    django_capture_on_commit_callbacks: Any,
) -> None:
    rule = rule_create(
        by=admin,
        name="Sign-in",
        kind="sign_in_failures",
        thresholds={"failures": 3},
        environment=make_environment(),  # sign-in belongs to no environment: ignored
        webhook_url=receiver.url,
    )
    assert rule.environment is None
    subscription_set(user=approver, rule=rule, mode="immediate")
    client = Client()
    for _ in range(3):
        client.post("/login/", {"username": "maker@payops.local", "password": "wrong-password"})
    client.post("/login/", {"username": "compliance@payops.local", "password": DEMO_PASSWORD})
    with django_capture_on_commit_callbacks(execute=True):
        alerts_evaluate()
        alerts_evaluate()
    (alert,) = Alert.objects.all()
    assert alert.subject == "account:maker@payops.local"
    assert "3 failed sign-ins" in alert.summary
    assert len(mail.outbox) == 1 and len(receiver.posts) == 1
    with django_capture_on_commit_callbacks(execute=True):
        alerts_evaluate(now=later(hours=25))  # past the lockout's failure memory (24 h)
    alert.refresh_from_db()
    assert alert.state == AlertState.RESOLVED
    assert len(mail.outbox) == 2 and len(receiver.posts) == 2


def test_one_open_alert_per_rule_and_subject_even_for_two_evaluators(admin: StaffUser) -> None:
    rule = rule_create(by=admin, name="R", kind="webhook_receiver", thresholds={}, environment=None)
    now = timezone.now()
    assert alert_fire(rule=rule, subject="environment:1", summary="x", now=now) is not None
    # A second evaluator that read the state before the first committed inserts the same.
    assert alert_fire(rule=rule, subject="environment:1", summary="x", now=now) is None
    with pytest.raises(IntegrityError), transaction.atomic():
        Alert.objects.create(rule=rule, subject="environment:1", summary="y")
    assert Alert.objects.filter(rule=rule).count() == 1
    assert AuditEntry.objects.filter(action="alerts.fired").count() == 1
    # Once resolved, the subject may fire again (a new episode).
    Alert.objects.filter(rule=rule).update(state=AlertState.RESOLVED)
    assert alert_fire(rule=rule, subject="environment:1", summary="x", now=now) is not None


def test_a_failed_webhook_is_retried_with_backoff_and_never_loses_the_alert(
    admin: StaffUser, receiver: Receiver, django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.ALERTS_DELIVERY_MAX_ATTEMPTS = 3
    rule = rule_create(
        by=admin,
        name="R",
        kind="webhook_drift",
        thresholds={"events": 1},
        environment=None,
        webhook_url=receiver.url,
    )
    drifting_event(make_environment(), 1)
    receiver.fail_next = 1
    with django_capture_on_commit_callbacks(execute=True):
        alerts_evaluate()
    assert Alert.objects.filter(rule=rule, state=AlertState.OPEN).count() == 1
    (delivery,) = AlertDelivery.objects.all()
    assert delivery.state == DeliveryState.PENDING and delivery.attempts == 1
    assert "HTTP 500" in delivery.last_error and receiver.url not in delivery.last_error
    assert delivery.next_attempt_at > timezone.now()  # backed off
    assert deliveries_retry_due() == 0  # not due yet
    assert deliveries_retry_due(now=later(minutes=2)) == 1
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.SENT and delivery.attempts == 2
    assert len(receiver.posts) == 1
    assert deliveries_retry_due(now=later(minutes=5)) == 0  # sent: never again
    # A receiver down for good: the delivery fails after its attempts, the alert stays open.
    receiver.fail_next = 10
    other = alert_fire(rule=rule, subject="environment:other", summary="z", now=timezone.now())
    assert other is not None
    (last,) = AlertDelivery.objects.filter(alert=other)
    for minutes in (1, 10, 100):
        deliveries_retry_due(now=later(minutes=minutes))
    last.refresh_from_db()
    assert last.state == DeliveryState.FAILED and last.attempts == 3
    other.refresh_from_db()
    assert other.state == AlertState.OPEN


def test_the_daily_digest_sends_one_email_per_person_and_nothing_when_empty(
    admin: StaffUser, approver: StaffUser, demo_staff: dict[str, StaffUser]
) -> None:
    auditor = demo_staff["auditor"]
    rule = rule_create(
        by=admin, name="Drift", kind="webhook_drift", thresholds={}, environment=None
    )
    quiet = rule_create(
        by=admin, name="Quiet", kind="payout_quiet", thresholds={}, environment=None
    )
    subscription_set(user=approver, rule=rule, mode="digest")
    subscription_set(user=auditor, rule=quiet, mode="digest")
    assert digest_send() == 0 and mail.outbox == []  # no alerts: nothing sent
    now = timezone.now()
    alert_fire(rule=rule, subject="environment:1", summary="first drift", now=now)
    alert_fire(rule=rule, subject="environment:2", summary="second drift", now=now)
    assert mail.outbox == []  # digest subscribers get nothing at once
    assert digest_send(now=later(minutes=1)) == 1
    (digest,) = mail.outbox
    assert digest.to == [approver.email] and "2 alerts" in digest.subject
    assert "first drift" in digest.body and "second drift" in digest.body
    assert digest_send(now=later(minutes=2)) == 0  # once a day
    assert len(mail.outbox) == 1


def test_thresholds_are_validated_per_kind(admin: StaffUser) -> None:
    with pytest.raises(ServiceError) as refused:
        rule_create(
            by=admin,
            name="R",
            kind="payout_submitting",
            thresholds={"minutes": 0, "x": 1},
            environment=None,
        )
    fields = {e.field for e in refused.value.errors}
    assert fields == {"thresholds.minutes", "thresholds.x"}
    with pytest.raises(ServiceError):
        rule_create(by=admin, name="R", kind="no_such_kind", thresholds={}, environment=None)
    with pytest.raises(ServiceError) as refused:
        rule_create(
            by=admin,
            name="R",
            kind="budget_low",
            thresholds={},
            environment=None,
            webhook_url="ftp://example.com/hook",
        )
    assert refused.value.errors[0].field == "webhook_url"
    rule = rule_create(by=admin, name="R", kind="budget_low", thresholds={}, environment=None)
    assert rule.thresholds == {"percent_left": 20}  # the kind's default


def test_rule_changes_are_audited_and_the_webhook_stays_secret(
    admin: StaffUser, settings: Any
) -> None:
    settings.ALERTS_WEBHOOK_ALLOW_HTTP = False
    url = "https://hooks.example.com/services/T1/B2/very-secret-token"
    rule = rule_create(by=admin, name="Budget", kind="budget_low", thresholds={}, environment=None)
    rule = rule_update(
        rule=rule,
        by=admin,
        name="Budget low",
        thresholds={"percent_left": 10},
        environment=None,
        severity="critical",
        webhook_url=url,
    )
    assert rule.webhook_url_hint == "https://hooks.example.com/…oken"
    assert url not in rule.webhook_url_encrypted
    change = AuditEntry.objects.get(action="alerts.rule_changed")
    assert change.before["thresholds"] == {"percent_left": 20}
    assert change.after["thresholds"] == {"percent_left": 10}
    assert change.after["severity"] == "critical"
    assert url not in str(change.after)
    # Alerts declares the column, so key rotation re-encrypts it with every other secret.
    assert ENCRYPTED_FIELDS[AlertRule].columns == ("webhook_url_encrypted",)
    rule_set_enabled(rule=rule, enabled=False, by=admin)
    assert AuditEntry.objects.filter(action="alerts.rule_disabled").count() == 1
    assert AlertRule.objects.get(pk=rule.pk).enabled is False


def test_disabling_a_rule_resolves_its_open_alerts(admin: StaffUser) -> None:
    rule = rule_create(by=admin, name="R", kind="webhook_receiver", thresholds={}, environment=None)
    alert = alert_fire(rule=rule, subject="environment:1", summary="x", now=timezone.now())
    assert alert is not None
    rule_set_enabled(rule=rule, enabled=False, by=admin)
    alert.refresh_from_db()
    assert alert.state == AlertState.RESOLVED
