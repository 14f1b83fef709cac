"""Alert rule changes are admin changes (alerts.rule_changes, staff.changes): an admin proposes
on the pages or the API, another admin approves, the alerts services apply and audit it with
both; the webhook URL is never shown in full; a stale proposal fails."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from alerts.models import AlertRule, AlertState
from alerts.rule_changes import (
    CHANGE_KIND,
    CREATE_KIND,
    ENABLED_KIND,
    rule_change_propose,
    rule_create_propose,
    rule_enabled_propose,
)
from alerts.services import alert_fire, rule_create
from staff import crypto
from staff.changes import ChangeRefused, change_approve, changes_apply_due
from staff.models import AuditEntry, ChangeProposal, StaffUser
from tests.finance import make_environment, make_staff
from tests.identity import client_signed_in, stepped_up

pytestmark = pytest.mark.django_db

API = "/api/v1/alerts"
SECRET = "T1/B2/very-secret-token-5f3a"
URL = f"https://hooks.example.com/services/{SECRET}"
NEW_SECRET = "T9/B8/another-secret-token-77c1"
NEW_URL = f"https://hooks.example.com/services/{NEW_SECRET}"


@pytest.fixture
def admin(demo_staff: dict[str, StaffUser]) -> StaffUser:
    return demo_staff["admin"]


@pytest.fixture
def second_admin(demo_staff: dict[str, StaffUser]) -> StaffUser:
    """Another admin: proposals wait for them (no single-admin wait)."""
    return make_staff("admin", "second-admin@payops.test")


@pytest.fixture
def rule(admin: StaffUser) -> AlertRule:
    return rule_create(
        by=admin,
        name="Sign-in failures",
        kind="sign_in_failures",
        thresholds={},
        environment=None,
        webhook_url=URL,
    )


def _visible(proposal: ChangeProposal) -> str:
    """Everything a person reads of a proposal."""
    return json.dumps([proposal.summary, proposal.before, proposal.after, proposal.target_label])


def test_a_change_proposed_on_the_api_waits_then_another_admin_applies_it_audited_with_both(
    admin: StaffUser, second_admin: StaffUser, rule: AlertRule
) -> None:
    client = client_signed_in(admin)
    response = client.patch(
        f"{API}/rules/{rule.pk}",
        {"thresholds": {"failures": 9}, "webhook_url": NEW_URL},
        content_type="application/json",
    )

    assert response.status_code == 202
    body = response.json()
    assert body["kind"] == CHANGE_KIND and body["state"] == "pending"
    assert body["proposed_by"] == admin.email
    assert {row["field"] for row in body["diff"]} == {"thresholds", "webhook"}
    assert NEW_SECRET not in response.content.decode() and SECRET not in response.content.decode()
    rule.refresh_from_db()
    assert rule.thresholds["failures"] != 9
    assert crypto.decrypt(rule.webhook_url_encrypted) == URL  # nothing applied yet

    proposal = ChangeProposal.objects.get(pk=body["id"])
    # The proposer cannot approve their own change, on the API or the service.
    assert client.post(f"/api/v1/changes/{proposal.pk}/approve").status_code == 403
    with pytest.raises(ChangeRefused) as own:
        change_approve(proposal=proposal, by=stepped_up(admin))
    assert own.value.code == "change_own_proposal"

    approved = client_signed_in(second_admin).post(f"/api/v1/changes/{proposal.pk}/approve")

    assert approved.status_code == 200 and approved.json()["state"] == "applied"
    rule.refresh_from_db()
    assert rule.thresholds["failures"] == 9
    assert crypto.decrypt(rule.webhook_url_encrypted) == NEW_URL
    entry = AuditEntry.objects.get(action="alerts.rule_changed", target_id=str(rule.pk))
    assert entry.actor == second_admin
    assert entry.details["change"]["proposed_by"] == admin.email
    assert entry.details["change"]["approved_by"] == second_admin.email
    assert NEW_SECRET not in json.dumps(entry.details, default=str)


@pytest.mark.parametrize("role", ["finance_maker", "finance_approver", "compliance", "auditor"])
def test_only_admins_propose_and_decide(
    role: str,
    demo_staff: dict[str, StaffUser],
    admin: StaffUser,
    second_admin: StaffUser,
    rule: AlertRule,
) -> None:
    person = demo_staff[role]
    client = client_signed_in(person)
    assert client.post(f"{API}/rules/{rule.pk}/disable").status_code == 403
    assert (
        client.post(reverse("alerts:rule_toggle", args=[rule.pk]), {"enabled": "0"}).status_code
        == 403
    )
    with pytest.raises(PermissionDenied):
        rule_enabled_propose(rule=rule, enabled=False, by=stepped_up(person))
    assert not ChangeProposal.objects.filter(kind__startswith="alerts.").exists()

    proposal = rule_enabled_propose(rule=rule, enabled=False, by=stepped_up(admin))
    assert client.post(f"/api/v1/changes/{proposal.pk}/approve").status_code == 403
    with pytest.raises(ChangeRefused):
        change_approve(proposal=proposal, by=stepped_up(person))
    proposal.refresh_from_db()
    rule.refresh_from_db()
    assert proposal.state == ChangeProposal.State.PENDING and rule.enabled is True


def test_a_new_rule_is_created_by_its_proposer_once_approved(
    admin: StaffUser, second_admin: StaffUser
) -> None:
    environment = make_environment()
    proposal = rule_create_propose(
        by=stepped_up(admin),
        name="Stuck",
        kind="payout_submitting",
        thresholds={"minutes": 7},
        environment=environment,
        severity="critical",
        webhook_url=URL,
    )
    assert proposal.kind == CREATE_KIND and not AlertRule.objects.exists()
    assert SECRET not in _visible(proposal) and SECRET not in json.dumps(proposal.payload)
    assert crypto.decrypt(proposal.payload["webhook_url"]) == URL
    assert proposal.after["webhook"] == "https://hooks.example.com/…5f3a"

    change_approve(proposal=proposal, by=stepped_up(second_admin))

    rule = AlertRule.objects.get()
    assert (rule.name, rule.thresholds, rule.environment, rule.severity) == (
        "Stuck",
        {"minutes": 7},
        environment,
        "critical",
    )
    assert rule.created_by == admin
    assert crypto.decrypt(rule.webhook_url_encrypted) == URL
    entry = AuditEntry.objects.get(action="alerts.rule_created")
    assert entry.actor == second_admin
    assert entry.details["change"]["proposed_by"] == admin.email


def test_new_rules_wait_side_by_side_but_the_same_one_once(
    admin: StaffUser, second_admin: StaffUser
) -> None:
    client = client_signed_in(admin)
    body = {"name": "Budget", "kind": "budget_low", "thresholds": {"percent_left": 15}}
    assert client.post(f"{API}/rules", body, content_type="application/json").status_code == 202
    other = client.post(f"{API}/rules", {**body, "name": "Other"}, content_type="application/json")
    assert other.status_code == 202
    again = client.post(f"{API}/rules", {**body, "name": "budget"}, content_type="application/json")
    assert again.status_code == 409 and again.json()["code"] == "change_pending"
    assert "budget" in again.json()["message"]
    assert ChangeProposal.objects.filter(state="pending").count() == 2


def test_disabling_applies_once_approved_and_resolves_its_open_alerts(
    admin: StaffUser, second_admin: StaffUser, rule: AlertRule
) -> None:
    alert = alert_fire(rule=rule, subject="account:1", summary="failing", now=timezone.now())
    assert alert is not None
    proposal = rule_enabled_propose(rule=rule, enabled=False, by=stepped_up(admin))
    assert proposal.kind == ENABLED_KIND
    rule.refresh_from_db()
    alert.refresh_from_db()
    assert rule.enabled is True and alert.state == AlertState.OPEN

    change_approve(proposal=proposal, by=stepped_up(second_admin))

    rule.refresh_from_db()
    alert.refresh_from_db()
    assert rule.enabled is False and alert.state == AlertState.RESOLVED
    entry = AuditEntry.objects.get(action="alerts.rule_disabled")
    assert (entry.actor, entry.details["change"]["proposed_by"]) == (second_admin, admin.email)


def test_a_stale_proposal_fails_and_changes_nothing(
    admin: StaffUser, second_admin: StaffUser, rule: AlertRule
) -> None:
    change = rule_change_propose(
        rule=rule,
        by=stepped_up(admin),
        name=rule.name,
        thresholds={"failures": 9},
        environment=None,
        severity=rule.severity,
    )
    disable = rule_enabled_propose(rule=rule, enabled=False, by=stepped_up(admin))
    change_approve(proposal=disable, by=stepped_up(second_admin))  # the rule changed meanwhile

    change = change_approve(proposal=change, by=stepped_up(second_admin))

    assert change.state == ChangeProposal.State.FAILED
    assert "changed after this was proposed" in change.reason
    rule.refresh_from_db()
    assert rule.thresholds["failures"] != 9


def test_a_bad_threshold_is_refused_when_proposed_on_its_field(
    admin: StaffUser, second_admin: StaffUser, rule: AlertRule
) -> None:
    client = client_signed_in(admin)
    response = client.patch(
        f"{API}/rules/{rule.pk}", {"thresholds": {"failures": 0}}, content_type="application/json"
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["thresholds.failures"]
    created = client.post(
        f"{API}/rules",
        {"name": "R", "kind": "budget_low", "webhook_url": "ftp://nope"},
        content_type="application/json",
    )
    assert created.status_code == 400
    assert [e["field"] for e in created.json()["errors"]] == ["webhook_url"]
    page = client.post(
        reverse("alerts:rule_edit", args=[rule.pk]),
        {"name": "R", "severity": "warning", "threshold_failures": "0"},
    )
    assert page.status_code == 200 and "field-error" in page.content.decode()
    assert not ChangeProposal.objects.filter(kind__startswith="alerts.").exists()


def test_nothing_to_change_is_refused(
    admin: StaffUser, second_admin: StaffUser, rule: AlertRule
) -> None:
    client = client_signed_in(admin)
    same = client.patch(
        f"{API}/rules/{rule.pk}", {"name": rule.name}, content_type="application/json"
    )
    assert same.status_code == 400 and same.json()["code"] == "no_change"
    enabled = client.post(f"{API}/rules/{rule.pk}/enable")
    assert enabled.status_code == 409 and enabled.json()["code"] == "no_change"


def test_the_webhook_url_is_never_shown_in_full_on_the_pages_or_the_api(
    admin: StaffUser, second_admin: StaffUser, rule: AlertRule
) -> None:
    client = client_signed_in(admin)
    response = client.post(
        reverse("alerts:rule_edit", args=[rule.pk]),
        {
            "name": rule.name,
            "severity": "critical",
            "threshold_failures": "5",
            "webhook_url": NEW_URL,
        },
    )
    assert response.status_code == 302
    proposal = ChangeProposal.objects.get(kind=CHANGE_KIND)
    assert NEW_SECRET not in _visible(proposal)
    assert NEW_SECRET not in json.dumps(proposal.payload)
    assert proposal.after["webhook"] == "https://hooks.example.com/…77c1 (new URL)"
    shown = [
        client.get(reverse("alerts:rules")).content.decode(),
        client_signed_in(second_admin).get(reverse("staff:changes")).content.decode(),
        client.get("/api/v1/changes").content.decode(),
        client.get(f"/api/v1/changes/{proposal.pk}").content.decode(),
        client.get(f"{API}/rules/{rule.pk}").content.decode(),
    ]
    for text in shown:
        assert NEW_SECRET not in text and SECRET not in text
    assert "…77c1 (new URL)" in shown[1]


def test_the_rule_list_shows_what_waits_and_the_page_says_so(
    admin: StaffUser, second_admin: StaffUser, rule: AlertRule, demo_staff: dict[str, StaffUser]
) -> None:
    client = client_signed_in(admin)
    response = client.post(reverse("alerts:rule_toggle", args=[rule.pk]), {"enabled": "0"})
    assert response.status_code == 302
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert said == [
        "Proposed: Disable the alert rule Sign-in failures. "
        "Waiting for another admin to approve it."
    ]
    client.post(
        reverse("alerts:rule_new"),
        {
            "kind": "budget_low",
            "name": "Budget",
            "severity": "warning",
            "threshold_percent_left": "15",
        },
    )
    # Every reader sees what waits (the auditor too); nothing applied.
    html = client_signed_in(demo_staff["auditor"]).get(reverse("alerts:rules")).content.decode()
    assert (
        "Disable the alert rule Sign-in failures" in html
        and 'data-testid="rule-change-waiting"' in html
    )
    assert "Create the alert rule Budget (budget_low)" in html
    rule.refresh_from_db()
    assert rule.enabled is True and not AlertRule.objects.filter(name="Budget").exists()
    # A second toggle while the first waits: refused with a message, not an error page.
    again = client.post(reverse("alerts:rule_toggle", args=[rule.pk]), {"enabled": "0"})
    assert again.status_code == 302
    assert "already waiting" in str(list(get_messages(again.wsgi_request))[-1])


def test_a_single_admin_s_proposal_applies_after_the_wait_as_the_system(
    admin: StaffUser, rule: AlertRule
) -> None:
    proposal = rule_enabled_propose(rule=rule, enabled=False, by=stepped_up(admin))
    assert proposal.apply_after is not None
    assert changes_apply_due(now=proposal.apply_after) == 1

    rule.refresh_from_db()
    assert rule.enabled is False
    entry = AuditEntry.objects.get(action="alerts.rule_disabled")
    assert entry.actor is None and entry.details["change"]["proposed_by"] == admin.email


def test_maker_checker_off_applies_at_once(
    settings: Any, admin: StaffUser, second_admin: StaffUser, rule: AlertRule
) -> None:
    settings.PAYOPS_ADMIN_MAKER_CHECKER = False
    client = client_signed_in(admin)

    response = client.patch(
        f"{API}/rules/{rule.pk}", {"severity": "critical"}, content_type="application/json"
    )

    assert response.status_code == 202 and response.json()["state"] == "applied"
    rule.refresh_from_db()
    assert rule.severity == "critical"
    entry = AuditEntry.objects.get(action="alerts.rule_changed")
    assert entry.actor == admin and "maker-checker is off" in entry.details["change"]["how"]


def test_the_api_shows_each_rule_s_changes_waiting(
    admin: StaffUser, second_admin: StaffUser, rule: AlertRule, demo_staff: dict[str, StaffUser]
) -> None:
    proposal = rule_enabled_propose(rule=rule, enabled=False, by=stepped_up(admin))
    reader = client_signed_in(demo_staff["auditor"])
    one = reader.get(f"{API}/rules/{rule.pk}").json()
    (listed,) = reader.get(f"{API}/rules").json()
    for found in (one, listed):
        assert [(c["id"], c["kind"], c["proposed_by"]) for c in found["changes_waiting"]] == [
            (proposal.pk, ENABLED_KIND, admin.email)
        ]
    change_approve(proposal=proposal, by=stepped_up(second_admin))
    assert reader.get(f"{API}/rules/{rule.pk}").json()["changes_waiting"] == []


def test_the_rule_list_costs_the_same_queries_whatever_waits(
    admin: StaffUser, second_admin: StaffUser
) -> None:
    client = client_signed_in(admin)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("alerts:rules")).status_code == 200
        return len(captured)

    def add_rule_with_a_waiting_change(name: str) -> None:
        made = rule_create(by=admin, name=name, kind="budget_low", thresholds={}, environment=None)
        rule_enabled_propose(rule=made, enabled=False, by=stepped_up(admin))

    add_rule_with_a_waiting_change("R0")
    few = queries()
    for n in range(1, 6):
        add_rule_with_a_waiting_change(f"R{n}")
    assert queries() == few


def test_a_new_rule_whose_environment_is_gone_fails_instead_of_crashing(
    admin: StaffUser, second_admin: StaffUser
) -> None:
    environment = make_environment()
    proposal = rule_create_propose(
        by=stepped_up(admin),
        name="Stuck",
        kind="payout_submitting",
        thresholds={"minutes": 7},
        environment=environment,
    )
    environment.delete()

    proposal = change_approve(proposal=proposal, by=stepped_up(second_admin))

    assert proposal.state == ChangeProposal.State.FAILED
    assert "environment" in proposal.reason and not AlertRule.objects.exists()
