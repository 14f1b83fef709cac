"""Maker-checker on admin changes (staff.changes): both paths, the refusals, secrets, pages, API."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core import mail
from django.utils import timezone

from gateway.models import Environment
from gateway.services.environment_changes import environment_change
from gateway.services.environments import environment_create
from payouts.approval.policy import approval_policy_current
from payouts.approval.policy_changes import approval_policy_propose
from payouts.approval.rules import RuleSpec
from staff import crypto
from staff.change_kinds import role_change_propose
from staff.changes import (
    ChangeRefused,
    change_approve,
    change_reject,
    change_withdraw,
    changes_apply_due,
)
from staff.models import AuditEntry, ChangeProposal
from staff.roles import roles_sync
from staff.step_up import StepUpRequired
from tests.identity import client_signed_in, stepped_up
from tests.staff.second_factor_support import person

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "new-upstream-password-8c1f"


@pytest.fixture(autouse=True)
def _roles() -> None:
    roles_sync()


def _groups(user: Any) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


def test_two_admins_a_role_grant_waits_until_the_second_approves_and_the_audit_names_both(
    django_capture_on_commit_callbacks: Any,
) -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")

    with django_capture_on_commit_callbacks(execute=True):
        proposal = role_change_propose(
            user=clerk, role="finance_approver", by=stepped_up(first), grant=True
        )

    assert proposal.state == ChangeProposal.State.PENDING
    assert proposal.apply_after is None  # another admin exists: no wait, it waits for them
    assert "finance_approver" not in _groups(clerk)
    assert sorted(m.to[0] for m in mail.outbox) == [first.email, second.email]

    with pytest.raises(ChangeRefused) as own:
        change_approve(proposal=proposal, by=stepped_up(first))
    assert own.value.code == "change_own_proposal"
    assert "finance_approver" not in _groups(clerk)

    proposal = change_approve(proposal=proposal, by=stepped_up(second))

    assert proposal.state == ChangeProposal.State.APPLIED
    assert proposal.decided_by == second
    assert "finance_approver" in _groups(clerk)
    granted = AuditEntry.objects.get(action="role.granted")
    assert granted.actor == second
    assert granted.details["change"]["proposed_by"] == first.email
    assert granted.details["change"]["approved_by"] == second.email


def test_one_admin_the_change_applies_only_after_the_wait_and_every_admin_is_emailed(
    settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.PAYOPS_ADMIN_CHANGE_WAIT_HOURS = 24
    only = person("admin-only@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")

    with django_capture_on_commit_callbacks(execute=True):
        proposal = role_change_propose(
            user=clerk, role="compliance", by=stepped_up(only), grant=True
        )

    assert proposal.state == ChangeProposal.State.PENDING
    assert proposal.apply_after is not None
    assert proposal.apply_after - proposal.proposed_at == pytest.approx(
        timedelta(hours=24), abs=timedelta(seconds=5)
    )
    assert [m.to for m in mail.outbox] == [[only.email]]
    assert "unless another admin decides" in mail.outbox[0].body

    # Not yet due: nothing happens.
    assert changes_apply_due(now=proposal.apply_after - timedelta(minutes=1)) == 0
    assert "compliance" not in _groups(clerk)

    with django_capture_on_commit_callbacks(execute=True):
        assert changes_apply_due(now=proposal.apply_after + timedelta(seconds=1)) == 1

    proposal.refresh_from_db()
    assert proposal.state == ChangeProposal.State.APPLIED
    assert proposal.decided_by is None
    assert "compliance" in _groups(clerk)
    granted = AuditEntry.objects.get(action="role.granted")
    assert granted.actor is None
    assert granted.details["change"]["proposed_by"] == only.email
    assert "wait" in granted.details["change"]["how"]
    assert "applied after the wait" in mail.outbox[-1].subject


def test_the_single_admin_cannot_approve_their_own_change_during_the_wait() -> None:
    only = person("admin-only@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")
    proposal = role_change_propose(user=clerk, role="compliance", by=stepped_up(only), grant=True)

    with pytest.raises(ChangeRefused):
        change_approve(proposal=proposal, by=stepped_up(only))
    assert "compliance" not in _groups(clerk)


def test_a_target_changed_meanwhile_fails_the_proposal_with_why() -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")
    proposal = role_change_propose(user=clerk, role="compliance", by=stepped_up(first), grant=True)

    clerk.groups.add(Group.objects.get(name="finance_approver"))  # someone else changed it

    proposal = change_approve(proposal=proposal, by=stepped_up(second))

    assert proposal.state == ChangeProposal.State.FAILED
    assert "changed after this was proposed" in proposal.reason
    assert "compliance" not in _groups(clerk)
    assert AuditEntry.objects.filter(action="change.failed").exists()


def test_proposing_and_deciding_need_step_up_and_an_admin() -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")

    with pytest.raises(StepUpRequired):
        role_change_propose(user=clerk, role="compliance", by=first, grant=True)
    proposal = role_change_propose(user=clerk, role="compliance", by=stepped_up(first), grant=True)
    with pytest.raises(StepUpRequired):
        change_approve(proposal=proposal, by=person("admin-three@example.test", "admin"))
    with pytest.raises(ChangeRefused) as not_admin:
        change_approve(proposal=proposal, by=stepped_up(clerk))
    assert not_admin.value.code == "permission_denied"
    assert ChangeProposal.objects.get(pk=proposal.pk).is_pending
    del second


def test_the_proposer_withdraws_others_reject_with_a_reason() -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")
    proposal = role_change_propose(user=clerk, role="compliance", by=stepped_up(first), grant=True)

    with pytest.raises(ChangeRefused):
        change_withdraw(proposal=proposal, by=second)
    change_withdraw(proposal=proposal, by=first)
    assert ChangeProposal.objects.get(pk=proposal.pk).state == ChangeProposal.State.WITHDRAWN

    again = role_change_propose(user=clerk, role="compliance", by=stepped_up(first), grant=True)
    rejected = change_reject(proposal=again, by=stepped_up(second), reason="not in their job")
    assert rejected.state == ChangeProposal.State.REJECTED
    assert rejected.reason == "not in their job"
    assert "compliance" not in _groups(clerk)


def test_maker_checker_off_applies_at_once(settings: Any) -> None:
    settings.PAYOPS_ADMIN_MAKER_CHECKER = False
    first = person("admin-one@example.test", "admin")
    person("admin-two@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")

    proposal = role_change_propose(user=clerk, role="compliance", by=stepped_up(first), grant=True)

    assert proposal.state == ChangeProposal.State.APPLIED
    assert "compliance" in _groups(clerk)


def _environment() -> Environment:
    return environment_create(
        by=None,
        name="Sandbox A",
        kind="sandbox",
        base_url="https://upstream.example.test",
        client_id="client-a",
        password="old-password",
        api_key="old-api-key",
    )


def test_new_credentials_wait_for_approval_and_never_appear_in_the_proposal_audit_or_logs(
    caplog: pytest.LogCaptureFixture, django_capture_on_commit_callbacks: Any
) -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    environment = _environment()
    caplog.set_level(logging.DEBUG)

    with django_capture_on_commit_callbacks(execute=True):
        proposal = environment_change(
            environment=environment,
            by=stepped_up(first),
            password=NEW_PASSWORD,
            rate_per_second=7,
        )

    assert proposal is not None
    environment.refresh_from_db()
    assert environment.password == "old-password"  # not yet
    assert environment.rate_per_second == 7  # limits need no second admin
    shown = json.dumps([proposal.summary, proposal.before, proposal.after, proposal.diff_rows()])
    assert NEW_PASSWORD not in shown
    assert proposal.after["password"] == "replaced"
    assert NEW_PASSWORD not in json.dumps(proposal.payload)
    assert crypto.decrypt(proposal.payload["credentials"]["password"]) == NEW_PASSWORD

    with django_capture_on_commit_callbacks(execute=True):
        change_approve(proposal=proposal, by=stepped_up(second))

    environment.refresh_from_db()
    assert environment.password == NEW_PASSWORD
    audits = json.dumps(list(AuditEntry.objects.values_list("details", flat=True)))
    assert NEW_PASSWORD not in audits
    assert NEW_PASSWORD not in caplog.text
    assert NEW_PASSWORD not in "".join(m.body + m.subject for m in mail.outbox)
    updated = AuditEntry.objects.get(action="environment.updated", actor=second)
    assert updated.details["credentials_replaced"] == ["password"]
    assert updated.details["change"]["proposed_by"] == first.email


def test_an_environment_edited_meanwhile_fails_the_credential_proposal() -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    environment = _environment()
    proposal = environment_change(
        environment=environment, by=stepped_up(first), verification_email="ops@example.test"
    )
    assert proposal is not None
    environment_change(environment=environment, by=stepped_up(second), name="Renamed")

    proposal = change_approve(proposal=proposal, by=stepped_up(second))

    assert proposal.state == ChangeProposal.State.FAILED
    environment.refresh_from_db()
    assert environment.verification_email == ""


def test_a_policy_publication_waits_for_another_admin() -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    rules = [RuleSpec(required_approvals=2, min_amount=Decimal("1000"), currency="USD")]

    proposal = approval_policy_propose(by=stepped_up(first), default_required=1, rules=rules)

    assert approval_policy_current() is None
    change_approve(proposal=proposal, by=stepped_up(second))
    policy = approval_policy_current()
    assert policy is not None
    assert policy.version == 1
    assert policy.created_by == first
    assert policy.specs()[0].min_amount == Decimal("1000")
    published = AuditEntry.objects.get(action="approval_policy.published")
    assert published.actor == second


# --- Pages and API, per role --------------------------------------------------------------------

ROLE_KEYS = ("finance_maker", "finance_approver", "compliance", "admin")


@pytest.mark.parametrize("role_key", ROLE_KEYS)
def test_the_changes_page_is_for_admins_only(role_key: str, client_for: Any) -> None:
    response = client_for(role_key).get("/changes/")
    assert response.status_code == (200 if role_key == "admin" else 403)


@pytest.mark.parametrize("role_key", ROLE_KEYS)
def test_the_changes_api_is_for_admins_only(role_key: str, client_for: Any) -> None:
    response = client_for(role_key).get("/api/v1/changes")
    assert response.status_code == (200 if role_key == "admin" else 403)


@pytest.mark.parametrize("role_key", ROLE_KEYS)
def test_approving_through_the_api_is_for_admins_only(role_key: str, client_for: Any) -> None:
    proposer = person("admin-proposer@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")
    proposal = role_change_propose(
        user=clerk, role="compliance", by=stepped_up(proposer), grant=True
    )

    response = client_for(role_key).post(f"/api/v1/changes/{proposal.pk}/approve")

    if role_key == "admin":
        assert response.status_code == 200, response.content
        assert response.json()["state"] == "applied"
        assert "compliance" in _groups(clerk)
    else:
        assert response.status_code == 403
        assert "compliance" not in _groups(clerk)


def test_the_page_lists_a_waiting_change_and_another_admin_approves_it_there() -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")
    proposal = role_change_propose(user=clerk, role="compliance", by=stepped_up(first), grant=True)

    own = client_signed_in(first).get("/changes/")
    assert proposal.summary in own.content.decode()
    assert b'data-testid="withdraw"' in own.content
    assert b'data-testid="approve"' not in own.content

    client = client_signed_in(second)
    assert b'data-testid="approve"' in client.get("/changes/").content
    response = client.post(f"/changes/{proposal.pk}/approve/")
    assert response.status_code == 302
    assert "compliance" in _groups(clerk)


def test_rejecting_through_the_api_needs_a_reason_on_the_field() -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")
    proposal = role_change_propose(user=clerk, role="compliance", by=stepped_up(first), grant=True)
    client = client_signed_in(second)

    blank = client.post(
        f"/api/v1/changes/{proposal.pk}/reject", {"reason": "  "}, content_type="application/json"
    )
    assert blank.status_code == 400
    assert blank.json()["errors"][0]["field"] == "reason"
    done = client.post(
        f"/api/v1/changes/{proposal.pk}/reject",
        {"reason": "no"},
        content_type="application/json",
    )
    assert done.status_code == 200
    assert done.json()["state"] == "rejected"


def test_a_stale_due_time_after_a_decision_does_nothing() -> None:
    only = person("admin-only@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")
    proposal = role_change_propose(user=clerk, role="compliance", by=stepped_up(only), grant=True)
    change_withdraw(proposal=proposal, by=only)

    assert changes_apply_due(now=timezone.now() + timedelta(days=2)) == 0
    assert "compliance" not in _groups(clerk)


def test_admins_see_the_count_of_waiting_changes_in_the_navigation() -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")
    client = client_signed_in(second)
    assert b'data-testid="nav-changes-pending"' not in client.get("/changes/").content

    role_change_propose(user=clerk, role="compliance", by=stepped_up(first), grant=True)

    html = client.get("/changes/").content.decode()
    assert 'data-testid="nav-changes-pending">1</span>' in html
    assert b"nav-changes-pending" not in client_signed_in(clerk).get("/").content


@pytest.mark.parametrize("role_key", ROLE_KEYS)
@pytest.mark.parametrize("action", ["approve", "reject", "withdraw"])
def test_deciding_on_the_page_is_for_admins_only(
    role_key: str, action: str, client_for: Any
) -> None:
    proposer = person("admin-proposer@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")
    proposal = role_change_propose(
        user=clerk, role="compliance", by=stepped_up(proposer), grant=True
    )

    response = client_for(role_key).post(f"/changes/{proposal.pk}/{action}/", {"reason": "not now"})

    proposal.refresh_from_db()
    if role_key != "admin":
        assert response.status_code == 403
        assert proposal.is_pending
        return
    assert response.status_code == 302
    expected = {
        "approve": ChangeProposal.State.APPLIED,
        "reject": ChangeProposal.State.REJECTED,
        "withdraw": ChangeProposal.State.PENDING,  # only its proposer may withdraw it
    }[action]
    assert proposal.state == expected


def test_the_webhook_register_endpoint_answers_202_with_the_proposal(
    client_for: Any, settings: Any
) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = "https://payops.example.test"
    environment = _environment()

    response = client_for("admin").post(f"/api/v1/webhooks/endpoints/{environment.pk}/register")

    assert response.status_code == 202, response.content
    body = response.json()
    assert body["kind"] == "webhooks.endpoint" and body["state"] == "pending"
    assert body["apply_after"]  # the test fixture's single admin: it waits
    listed = client_for("admin").get(f"/api/v1/changes/{body['id']}").json()
    assert listed["summary"].startswith("Register the webhook receiver")


def test_a_change_about_the_only_other_admin_waits_as_they_cannot_approve_it() -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")

    proposal = role_change_propose(user=second, role="compliance", by=stepped_up(first), grant=True)

    assert proposal.apply_after is not None  # nobody but `second` could approve: the wait path
    with pytest.raises(ChangeRefused) as refused:
        change_approve(proposal=proposal, by=stepped_up(second))
    assert refused.value.code == "change_self"
    assert changes_apply_due(now=proposal.apply_after) == 1
    assert "compliance" in _groups(second)


def test_one_pending_change_per_kind_and_target() -> None:
    first = person("admin-one@example.test", "admin")
    person("admin-two@example.test", "admin")
    clerk = person("clerk@example.test", "finance_maker")
    role_change_propose(user=clerk, role="compliance", by=stepped_up(first), grant=True)

    with pytest.raises(ChangeRefused) as again:
        role_change_propose(user=clerk, role="compliance", by=stepped_up(first), grant=True)

    assert again.value.code == "change_pending" and again.value.status == 409
    assert ChangeProposal.objects.count() == 1
