"""Alerts tell open pages when they change: an alert fired, acknowledged or resolved sends one
small `alert.changed` message per role that reads alerts, once its transaction commits."""

from __future__ import annotations

import pytest
from django.utils import timezone

from alerts.models import AlertRule
from alerts.services import alert_acknowledge, alert_fire, rule_create, rule_set_enabled
from console.broadcast import role_group
from console.models import LiveMessage
from staff.models import StaffUser
from staff.roles import ALERTS_VIEW, ROLES

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbox_layer")]
READERS = {role_group(role.key) for role in ROLES if ALERTS_VIEW in role.permissions}


def alert_messages() -> list[tuple[str, dict[str, object]]]:
    return [
        (row.group, row.message["payload"])
        for row in LiveMessage.objects.order_by("id")
        if row.message.get("kind") == "alert.changed"
    ]


@pytest.fixture
def rule(demo_staff: dict[str, StaffUser]) -> AlertRule:
    return rule_create(
        by=demo_staff["admin"], name="Failed", kind="payout_failed", thresholds={}, environment=None
    )


def test_a_fired_alert_reaches_the_alert_readers(rule: AlertRule) -> None:
    alert = alert_fire(rule=rule, subject="payout:1", summary="Payout 1 failed", now=timezone.now())

    assert alert is not None
    sent = alert_messages()
    assert {group for group, _ in sent} == READERS
    assert len(sent) == len(READERS)
    assert all(payload == {"alert_id": alert.pk, "state": "open"} for _, payload in sent)


def test_an_acknowledged_alert_reaches_them_too(
    rule: AlertRule, demo_staff: dict[str, StaffUser]
) -> None:
    alert = alert_fire(rule=rule, subject="payout:1", summary="Payout 1 failed", now=timezone.now())
    assert alert is not None
    LiveMessage.objects.all().delete()

    alert_acknowledge(alert=alert, by=demo_staff["admin"])  # a failed payout's alert resolves

    sent = alert_messages()
    assert {group for group, _ in sent} == READERS
    assert len(sent) == len(READERS)  # acknowledged and resolved in one transaction: said once
    assert all(payload == {"alert_id": alert.pk, "state": "resolved"} for _, payload in sent)


def test_a_rule_turned_off_says_its_open_alerts_resolved(
    rule: AlertRule, demo_staff: dict[str, StaffUser]
) -> None:
    alert = alert_fire(rule=rule, subject="payout:1", summary="Payout 1 failed", now=timezone.now())
    assert alert is not None
    LiveMessage.objects.all().delete()

    rule_set_enabled(rule=rule, enabled=False, by=demo_staff["admin"])

    sent = alert_messages()
    assert {group for group, _ in sent} == READERS
    assert all(payload == {"alert_id": alert.pk, "state": "resolved"} for _, payload in sent)
