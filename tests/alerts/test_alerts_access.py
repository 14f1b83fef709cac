"""Who may do what with alerts, on the pages and the API alike (a test per role), the pages'
parts (filters, acknowledge, masked webhook), and the history's constant number of queries."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from alerts.models import Alert, AlertRule, AlertState, AlertSubscription
from alerts.rule_changes import rule_create_propose
from alerts.services import alert_acknowledge, alert_fire, rule_create
from staff.changes import change_approve
from staff.models import AuditEntry, ChangeProposal, StaffUser
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import stepped_up

pytestmark = pytest.mark.django_db

API = "/api/v1/alerts"
ROLES = ["finance_maker", "finance_approver", "compliance", "admin", "auditor"]
# Who acknowledges (every role that acts) and who manages rules (admins).
ACKNOWLEDGES = {"finance_maker", "finance_approver", "compliance", "admin"}
MANAGES = {"admin"}


@pytest.fixture
def rule(demo_staff: dict[str, StaffUser]) -> AlertRule:
    return rule_create(
        by=demo_staff["admin"],
        name="Receivers",
        kind="webhook_receiver",
        thresholds={},
        environment=None,
        webhook_url="https://hooks.example.com/services/T1/B2/very-secret-token",
    )


def open_alert(rule: AlertRule, subject: str = "environment:1") -> Alert:
    alert = alert_fire(
        rule=rule, subject=subject, summary=f"{subject} is silent", now=timezone.now()
    )
    assert alert is not None
    return alert


@pytest.mark.parametrize("role", ROLES)
def test_each_role_reads_and_acts_as_its_permissions_allow(
    role: str, client_for: Any, demo_staff: dict[str, StaffUser], rule: AlertRule
) -> None:
    client = client_for(role)
    alert = open_alert(rule)
    # Every role reads the history, the rules, the kinds, and chooses its own subscriptions.
    for url in (API, f"{API}/rules", f"{API}/kinds", f"{API}/subscriptions", f"{API}/{alert.pk}"):
        assert client.get(url).status_code == 200, url
    for name in ("alerts:history", "alerts:rules", "alerts:subscriptions"):
        assert client.get(reverse(name)).status_code == 200, name
    response = client.put(
        f"{API}/subscriptions/{rule.pk}", {"mode": "digest"}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["mode"] == "digest"
    assert AlertSubscription.objects.get(user=demo_staff[role], rule=rule).mode == "digest"

    # Acknowledge: page and API.
    status = client.post(f"{API}/{alert.pk}/acknowledge").status_code
    assert status == (200 if role in ACKNOWLEDGES else 403)
    other = open_alert(rule, "environment:2")
    page = client.post(reverse("alerts:acknowledge", args=[other.pk]))
    assert page.status_code == (302 if role in ACKNOWLEDGES else 403)
    other.refresh_from_db()
    assert (other.acknowledged_at is not None) == (role in ACKNOWLEDGES)

    # Rules: propose creating, changing, disabling (admin changes another admin approves):
    # admins only, page and API; nothing applies before the approval.
    body = {"name": "Budget", "kind": "budget_low", "thresholds": {"percent_left": 15}}
    created = client.post(f"{API}/rules", body, content_type="application/json")
    assert created.status_code == (202 if role in MANAGES else 403)
    changed = client.patch(
        f"{API}/rules/{rule.pk}", {"severity": "critical"}, content_type="application/json"
    )
    assert changed.status_code == (202 if role in MANAGES else 403)
    assert client.post(f"{API}/rules/{rule.pk}/disable").status_code == (
        202 if role in MANAGES else 403
    )
    assert client.get(reverse("alerts:rule_new")).status_code == (200 if role in MANAGES else 403)
    toggle = client.post(reverse("alerts:rule_toggle", args=[rule.pk]), {"enabled": "0"})
    assert toggle.status_code == (302 if role in MANAGES else 403)
    waiting = ChangeProposal.objects.filter(state="pending").values_list("kind", flat=True)
    expected = ["alerts.rule_change", "alerts.rule_create", "alerts.rule_enabled"]
    assert sorted(waiting) == (expected if role in MANAGES else [])
    rule.refresh_from_db()
    assert (rule.enabled, rule.severity) == (True, "warning")  # waits for another admin
    assert not AlertRule.objects.filter(name="Budget").exists()


@pytest.mark.parametrize("role", sorted(set(ROLES) - ACKNOWLEDGES))
def test_the_services_refuse_too(
    role: str, demo_staff: dict[str, StaffUser], rule: AlertRule
) -> None:
    person = demo_staff[role]
    with pytest.raises(PermissionDenied):
        alert_acknowledge(alert=open_alert(rule), by=person)
    with pytest.raises(PermissionDenied):
        rule_create(by=person, name="x", kind="budget_low", thresholds={}, environment=None)
    with pytest.raises(PermissionDenied):
        rule_create_propose(
            by=stepped_up(person), name="x", kind="budget_low", thresholds={}, environment=None
        )


def test_the_webhook_url_is_never_shown_back(client_for: Any, rule: AlertRule) -> None:
    client = client_for("admin")
    secret = "very-secret-token"
    hint = "https://hooks.example.com/…oken"
    for name, args in (("alerts:rules", []), ("alerts:rule_edit", [rule.pk])):
        html = client.get(reverse(name, args=args)).content.decode()
        assert secret not in html and hint in html
    for url in (f"{API}/rules/{rule.pk}", f"{API}/rules"):
        response = client.get(url)
        assert secret not in response.content.decode()
        found = response.json()
        assert (found[0] if isinstance(found, list) else found)["webhook"] == hint


def _approve_waiting(by: StaffUser) -> None:
    """Another admin approves every alert rule change waiting (staff.changes)."""
    for proposal in ChangeProposal.objects.filter(state="pending", kind__startswith="alerts."):
        assert change_approve(proposal=proposal, by=stepped_up(by)).state == "applied"


def test_an_admin_creates_edits_and_disables_a_rule_on_the_pages(
    client_for: Any, demo_staff: dict[str, StaffUser]
) -> None:
    environment = make_environment()
    checker = make_staff("admin")
    client = client_for("admin")
    kinds = client.get(reverse("alerts:rule_new")).content.decode()
    assert "Payout stuck in submitting" in kinds and "?kind=payout_submitting" in kinds
    form = client.get(reverse("alerts:rule_new") + "?kind=payout_submitting").content.decode()
    assert 'name="threshold_minutes"' in form
    refused = client.post(
        reverse("alerts:rule_new"),
        {
            "kind": "payout_submitting",
            "name": "Stuck",
            "severity": "warning",
            "threshold_minutes": "0",
        },
    )
    assert refused.status_code == 200 and "field-error" in refused.content.decode()
    response = client.post(
        reverse("alerts:rule_new"),
        {
            "kind": "payout_submitting",
            "name": "Stuck",
            "severity": "critical",
            "environment": environment.name,
            "threshold_minutes": "7",
        },
    )
    assert response.status_code == 302
    assert not AlertRule.objects.filter(name="Stuck").exists()  # proposed, not applied
    _approve_waiting(checker)
    rule = AlertRule.objects.get(name="Stuck")
    assert rule.thresholds == {"minutes": 7} and rule.environment == environment
    response = client.post(
        reverse("alerts:rule_edit", args=[rule.pk]),
        {"name": "Stuck long", "severity": "warning", "environment": "", "threshold_minutes": "30"},
    )
    assert response.status_code == 302
    _approve_waiting(checker)
    rule.refresh_from_db()
    assert (rule.name, rule.thresholds, rule.environment) == ("Stuck long", {"minutes": 30}, None)
    client.post(reverse("alerts:rule_toggle", args=[rule.pk]), {"enabled": "0"})
    rule.refresh_from_db()
    assert rule.enabled is True
    _approve_waiting(checker)
    rule.refresh_from_db()
    assert rule.enabled is False
    entries = AuditEntry.objects.filter(
        target_id=str(rule.pk), action__startswith="alerts.rule_"
    ).order_by("pk")
    assert [e.action for e in entries] == [
        "alerts.rule_created",
        "alerts.rule_changed",
        "alerts.rule_disabled",
    ]
    assert {(e.actor, e.details["change"]["proposed_by"]) for e in entries} == {
        (checker, demo_staff["admin"].email)
    }


def test_subscriptions_page_saves_the_persons_choice(
    client_for: Any, demo_staff: dict[str, StaffUser], rule: AlertRule
) -> None:
    client = client_for("compliance")
    html = client.get(reverse("alerts:subscriptions")).content.decode()
    assert f'data-rule="{rule.pk}"' in html
    client.post(reverse("alerts:subscriptions"), {"rule": rule.pk, "mode": "immediate"})
    assert AlertSubscription.objects.get(user=demo_staff["compliance"]).mode == "immediate"
    client.post(reverse("alerts:subscriptions"), {"rule": rule.pk, "mode": ""})
    assert not AlertSubscription.objects.exists()
    assert AuditEntry.objects.filter(action="alerts.subscription_changed").count() == 2


def test_history_filters_and_acknowledge_button(
    client_for: Any, demo_staff: dict[str, StaffUser], rule: AlertRule
) -> None:
    first = open_alert(rule, "environment:1")
    open_alert(rule, "environment:2")
    Alert.objects.filter(pk=first.pk).update(state=AlertState.RESOLVED)
    client = client_for("finance_maker")
    html = client.get(reverse("alerts:history") + "?state=open").content.decode()
    assert re.findall(r'data-alert="(\d+)"', html) == [str(first.pk + 1)]
    assert 'data-testid="acknowledge"' in html
    html = client.get(reverse("alerts:history") + "?kind=budget_low").content.decode()
    assert re.findall(r'data-alert="(\d+)"', html) == []
    auditor_html = client_for("auditor").get(reverse("alerts:history")).content.decode()
    assert 'data-testid="acknowledge"' not in auditor_html  # reads, never acts


def test_the_history_costs_the_same_queries_whatever_its_length(
    client_for: Any, rule: AlertRule
) -> None:
    client = client_for("admin")
    open_alert(rule, "environment:0")
    client.get(reverse("alerts:history"))  # warm the session and caches

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("alerts:history")).status_code == 200
        return len(captured)

    one = queries()
    # Each alert names its own environment (its subject's, or its payout's) under "Opened".
    maker = make_staff("finance_maker")
    for n in range(1, 30):
        environment = make_environment(f"Environment {n}")
        if n % 2:
            open_alert(rule, f"environment:{environment.pk}")
        else:
            open_alert(rule, f"payout:{make_draft(maker=maker, environment=environment).pk}")
    AlertRule.objects.filter(pk=rule.pk).update(environment=make_environment())
    assert queries() == one
    assert one < 30
    html = client.get(reverse("alerts:history")).content.decode()
    for n in range(5, 30):  # the first page: the newest 25
        assert f'<span class="cell-note">Environment {n}</span>' in html


def test_the_environment_filter_finds_alerts_about_it_from_rules_for_every_environment(
    client_for: Any, rule: AlertRule
) -> None:
    main, other = make_environment("Main"), make_environment("Other")
    about_main = open_alert(rule, f"environment:{main.pk}")  # the rule covers every environment
    open_alert(rule, f"environment:{other.pk}")
    html = (
        client_for("finance_maker")
        .get(reverse("alerts:history") + "?environment=Main")
        .content.decode()
    )
    assert re.findall(r'data-alert="(\d+)"', html) == [str(about_main.pk)]
