"""Issue 23's "done when" for alerts, on the emulator over HTTP: each rule kind about payouts, the
upstream budget, reconciliation and webhooks fires from the emulator's faults or real state,
reaches the subscriber's email and a real webhook receiver once, and resolves when its condition
clears (a failed payout's alert when someone acknowledges it). The evaluator is called directly,
with the moment it evaluates at, so no test waits."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.utils import timezone

from alerts.models import Alert, AlertDelivery, AlertRule, AlertState, DeliveryState
from alerts.services import alert_acknowledge, alerts_evaluate, rule_create, subscription_set
from books.reconciliation.engine import run_start
from books.reconciliation.exception_actions import exception_refetch, exception_set_state
from books.reconciliation.models import ReconciliationException
from gateway.models import UpstreamCall
from payouts.approval.services import payout_approve
from payouts.models import Payout, PayoutStatus
from payouts.release.code import payout_otp_confirm, payout_otp_send
from payouts.release.initiation import payouts_recover_submitting
from payouts.tracking.polling.run import payouts_poll
from staff.models import AuditEntry, StaffUser
from tests.alerts.receiver import Receiver
from tests.gateway import conftest as gateway_fixtures
from tests.payouts import conftest as payout_fixtures
from tests.payouts.live import World, initiated, submitted_payout
from webhooks.services import webhook_endpoint_register

_fresh_shared_state = gateway_fixtures._fresh_shared_state
live_emulator = gateway_fixtures.live_emulator
sandbox = gateway_fixtures.sandbox
q_sync = payout_fixtures.q_sync
staff = payout_fixtures.staff
world = payout_fixtures.world

S = PayoutStatus
THRESHOLDS: dict[str, dict[str, int]] = {
    "approvals_waiting": {"minutes": 1},
    "payout_submitting": {"minutes": 1},
    "payout_quiet": {},
    "payout_failed": {"within_hours": 24},
    "reconciliation_open": {"count": 1},
    "budget_low": {"percent_left": 50},
    "webhook_receiver": {},
    "webhook_silence": {"minutes": 1},
}


@pytest.fixture(autouse=True)
def _nobody_listens(settings: Any) -> None:
    # The upstream's events go nowhere: PayOps learns by polling, refetching and reconciling.
    settings.WEBHOOKS_PUBLIC_BASE_URL = "http://127.0.0.1:9"
    settings.PAYOUTS_POLL_AFTER_SECONDS = -1
    settings.PAYOUTS_SUBMITTING_STALE_SECONDS = -1
    settings.GATEWAY_MAX_ATTEMPTS = 1


def later(minutes: int) -> Any:
    return timezone.now() + timedelta(minutes=minutes)


def evaluate_twice(minutes: int = 0) -> None:
    """The schedule's run, twice: the second never repeats what the first did."""
    alerts_evaluate(now=later(minutes))
    alerts_evaluate(now=later(minutes))


def one_alert(rule: AlertRule, state: str) -> Alert:
    (alert,) = Alert.objects.filter(rule=rule)
    assert alert.state == state, (rule.kind, alert.state, alert.summary)
    return alert


def test_each_rule_fires_once_reaches_email_and_webhook_and_resolves(
    world: World, staff: dict[str, StaffUser], receiver: Receiver
) -> None:
    admin, approver = staff["admin"], staff["approver"]
    rules = {
        kind: rule_create(
            by=admin,
            name=f"Watch {kind}",
            kind=kind,
            thresholds=thresholds,
            environment=world.environment,
            webhook_url=receiver.url,
        )
        for kind, thresholds in THRESHOLDS.items()
    }
    for rule in rules.values():
        subscription_set(user=approver, rule=rule, mode="immediate")

    # Approvals waiting past the SLA: fires, then clears once approved.
    first = submitted_payout(world, maker=staff["maker"], amount="101.00")
    evaluate_twice(minutes=2)
    one_alert(rules["approvals_waiting"], AlertState.OPEN)
    payout_approve(payout=first, by=approver)
    evaluate_twice(minutes=2)
    one_alert(rules["approvals_waiting"], AlertState.RESOLVED)

    # Stuck in submitting: the upstream answers 500 to the release (emulator fault) ...
    payout_otp_send(payout=first, by=approver)
    world.emulator.faults(error_rate=1.0)
    payout_otp_confirm(payout=first, by=approver, code=world.otp_code())
    assert Payout.objects.get(pk=first.pk).status == S.SUBMITTING
    evaluate_twice(minutes=2)
    one_alert(rules["payout_submitting"], AlertState.OPEN)
    # ... and the recovery schedule sends it once the upstream is back.
    world.emulator.faults(error_rate=0.0)
    payouts_recover_submitting()
    assert Payout.objects.get(pk=first.pk).status == S.CREATED
    evaluate_twice()
    one_alert(rules["payout_submitting"], AlertState.RESOLVED)

    # No receiver registered while a payout is open upstream.
    one_alert(rules["webhook_receiver"], AlertState.OPEN)

    # Quiet past its state's expected time (CREATED: 15 min), then it completes (polling).
    evaluate_twice(minutes=20)
    one_alert(rules["payout_quiet"], AlertState.OPEN)
    world.tick(times=3)
    payouts_poll()
    assert Payout.objects.get(pk=first.pk).status == S.COMPLETED
    evaluate_twice(minutes=20)
    one_alert(rules["payout_quiet"], AlertState.RESOLVED)

    # Fails upstream with its events dropped: reconciliation finds it, a refetch applies it.
    second = initiated(world, staff, "202.00")
    world.emulator.control("POST", "faults", json={"drop_events_next": 50})
    world.emulator.control(
        "POST", f"payouts/{second.upstream_id}/status", json={"status": "FAILED"}
    )
    run_start(environment=world.environment, by=staff["maker"])
    item = ReconciliationException.objects.get(payout=second)
    evaluate_twice()
    one_alert(rules["reconciliation_open"], AlertState.OPEN)
    assert not Alert.objects.filter(rule=rules["payout_failed"]).exists()
    exception_refetch(item=item, by=staff["maker"])
    assert Payout.objects.get(pk=second.pk).status == S.FAILED
    for found in ReconciliationException.objects.exclude(state="resolved"):
        exception_set_state(item=found, state="resolved", reason="explained", by=staff["maker"])
    evaluate_twice()
    one_alert(rules["reconciliation_open"], AlertState.RESOLVED)
    failed = one_alert(rules["payout_failed"], AlertState.OPEN)
    # It lasts (the payout stays failed) until someone acknowledges it; it never fires again.
    alert_acknowledge(alert=failed, by=approver)
    evaluate_twice()
    one_alert(rules["payout_failed"], AlertState.RESOLVED)

    # The week's budget: these calls leave less than half of it.
    used = UpstreamCall.objects.filter(environment=world.environment).count()
    world.environment.weekly_budget = used + 1
    world.environment.save(update_fields=["weekly_budget"])
    evaluate_twice()
    one_alert(rules["budget_low"], AlertState.OPEN)
    world.environment.weekly_budget = 100_000
    world.environment.save(update_fields=["weekly_budget"])
    evaluate_twice()
    one_alert(rules["budget_low"], AlertState.RESOLVED)

    # A receiver registered while a payout is in flight: that alert clears, silence begins.
    third = initiated(world, staff, "303.00")
    webhook_endpoint_register(environment=world.environment, by=admin)
    evaluate_twice(minutes=2)
    one_alert(rules["webhook_receiver"], AlertState.RESOLVED)
    one_alert(rules["webhook_silence"], AlertState.OPEN)
    world.tick(times=3)
    payouts_poll()
    assert Payout.objects.get(pk=third.pk).status == S.COMPLETED  # nothing left in flight
    evaluate_twice(minutes=2)
    one_alert(rules["webhook_silence"], AlertState.RESOLVED)

    # Each alert reached the subscriber's email and the webhook once when it fired, once when
    # it resolved; every delivery is sent and in the audit trail with its alert.
    alerts = list(Alert.objects.filter(rule__in=rules.values()))
    assert len(alerts) == len(THRESHOLDS)
    for alert in alerts:
        emails = [m for m in mail.outbox if alert.summary in m.subject]
        posts = [text for text in receiver.texts() if alert.summary in text]
        assert len(emails) == 2 and len(posts) == 2, (alert.rule.kind, len(emails), len(posts))
        assert [m.to for m in emails] == [[approver.email]] * 2
        assert sum(text.startswith("Resolved: ") for text in posts) == 1
        actions = set(
            AuditEntry.objects.filter(
                target_id=str(alert.pk), action__startswith="alerts."
            ).values_list("action", flat=True)
        )
        assert {"alerts.fired", "alerts.resolved"} <= actions
    assert AlertDelivery.objects.filter(alert__in=alerts).count() == 4 * len(alerts)
    assert not AlertDelivery.objects.exclude(state=DeliveryState.SENT).exists()
    post = receiver.posts[0]
    assert set(post) == {"text", "blocks"} and post["blocks"][0]["type"] == "section"
    # The webhook URL is a secret: never stored or audited in clear.
    assert receiver.url not in str(list(AuditEntry.objects.values_list("details", "after")))
    assert receiver.url not in str(list(AlertRule.objects.values()))
