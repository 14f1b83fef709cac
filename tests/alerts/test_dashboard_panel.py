"""The dashboard's alerts panel: what is open now, the newest first, at a constant query count."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from alerts.models import AlertRule
from alerts.services import alert_fire, rule_create, rule_set_enabled
from staff.models import StaffUser

pytestmark = pytest.mark.django_db

ROLES = ["finance_maker", "finance_approver", "compliance", "admin", "auditor"]


@pytest.fixture
def rule(demo_staff: dict[str, StaffUser]) -> AlertRule:
    return rule_create(
        by=demo_staff["admin"],
        name="Silence",
        kind="webhook_silence",
        thresholds={},
        environment=None,
    )


def fire(rule: AlertRule, n: int) -> None:
    assert alert_fire(
        rule=rule, subject=f"environment:{n}", summary=f"E{n} is silent", now=timezone.now()
    )


def dashboard(client: Any) -> str:
    response = client.get("/")
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("role", ROLES)
def test_every_role_sees_the_open_alerts_on_its_dashboard(
    role: str, client_for: Any, demo_staff: dict[str, StaffUser], rule: AlertRule
) -> None:
    fire(rule, 1)
    fire(rule, 2)
    other = rule_create(
        by=demo_staff["admin"],
        name="Other",
        kind="webhook_silence",
        thresholds={},
        environment=None,
    )
    fire(other, 3)
    rule_set_enabled(rule=other, enabled=False, by=demo_staff["admin"])  # resolves its alert

    page = dashboard(client_for(role))

    assert 'data-testid="open-alerts"' in page
    assert page.count('data-testid="open-alert"') == 2
    assert "E2 is silent" in page and "E1 is silent" in page and "E3 is silent" not in page
    assert page.index("E2 is silent") < page.index("E1 is silent")  # newest first
    assert "?state=open" in page
    # What is wrong now comes before the other panels and the links (console.dashboard's order).
    panels = [name for name in page.split('data-panel="')[1:]]
    assert panels[0].startswith("alerts.open"), panels[0][:40]
    assert page.index('data-panel="alerts.open"') < page.index("card card-links")


def test_no_open_alert_says_so(client_for: Any, rule: AlertRule) -> None:
    assert "No alert is open." in dashboard(client_for("admin"))


def test_the_panel_costs_the_same_queries_for_two_or_twenty_open_alerts(
    client_for: Any, rule: AlertRule
) -> None:
    client = client_for("finance_approver")
    fire(rule, 1)
    fire(rule, 2)
    dashboard(client)  # warm the session and caches
    with CaptureQueriesContext(connection) as few:
        dashboard(client)
    for n in range(3, 21):
        fire(rule, n)
    with CaptureQueriesContext(connection) as many:
        page = dashboard(client)
    assert len(many) == len(few)
    assert page.count('data-testid="open-alert"') == 5
    assert "The newest 5 of 20." in page
