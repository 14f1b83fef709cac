"""Dual control on bank details: a recipient, or a change to it, is payable only once a second
person with a role the policy names approves it; payouts to any other recipient are refused."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from accounts.models import Recipient, RecipientChange, RecipientStatus
from accounts.recipient_control import (
    recipient_approve,
    recipient_archive,
    recipient_change_propose,
    recipient_reject,
)
from accounts.recipients import (
    recipient_create,
    recipient_not_payable_reason,
    register_recipient_approver_roles,
)
from accounts.selectors import recipient_history
from gateway.client import call_sync, upstream
from gateway.models import Environment
from payouts.approval.services import payout_approve
from payouts.drafts.services import DraftValues, payout_draft_create
from payouts.errors import PayoutActionRefused, PayoutInvalid
from payouts.models import Approval, Payout
from payouts.selectors import payout_recipients
from staff.errors import ServiceError
from staff.models import AuditEntry, StaffUser
from staff.step_up import StepUpRequired
from tests.directory.conftest import WIRE_RECIPIENT, ApiClient, user_values
from tests.finance import make_end_user, make_environment, make_recipient, make_virtual_account
from tests.identity import client_signed_in, stepped_up
from users.services import end_user_create


@pytest.fixture
def offline(db: None) -> Environment:
    return make_environment()


@pytest.fixture
def default_policy() -> Iterator[None]:
    register_recipient_approver_roles(None)
    yield
    register_recipient_approver_roles(None)


def pending_recipient(environment: Environment, creator: StaffUser) -> Recipient:
    return make_recipient(
        environment,
        make_end_user(environment),
        created_by=creator,
        status=RecipientStatus.PENDING_APPROVAL,
        approval_note="",
    )


def draft_values(environment: Environment, recipient: Recipient) -> DraftValues:
    account = make_virtual_account(environment, recipient.end_user)
    return DraftValues(virtual_account=account, recipient=recipient, amount=Decimal("100.00"))


# --- Done when: a payout to a recipient nobody else approved is refused ------------------------


def test_a_payout_to_a_recipient_nobody_else_approved_is_refused_with_a_clear_reason(
    offline: Environment, staff: dict[str, StaffUser], default_policy: None
) -> None:
    maker = staff["finance_maker"]
    recipient = pending_recipient(offline, maker)
    values = draft_values(offline, recipient)
    with pytest.raises(PayoutInvalid) as refused:
        payout_draft_create(by=maker, environment=offline, values=values)
    assert refused.value.code == "recipient_not_approved"
    assert [e.field for e in refused.value.errors] == ["recipient"]
    assert "nobody else has approved this recipient" in refused.value.errors[0].message
    assert Payout.objects.count() == 0

    # The API says the same on the same field.
    maker_api = ApiClient(_token(maker))
    answer = maker_api.post(
        "payouts",
        {
            "virtual_account_id": str(values.virtual_account.pk),  # type: ignore[union-attr]
            "recipient_id": str(recipient.pk),
            "amount": "100.00",
        },
    )
    assert answer.status_code == 409, answer.content
    assert answer.json()["code"] == "recipient_not_approved"
    assert [e["field"] for e in answer.json()["errors"]] == ["recipient"]
    assert Payout.objects.count() == 0

    # Once someone else approves it, the same draft goes through.
    values.recipient = recipient_approve(
        recipient=recipient, by=stepped_up(staff["finance_approver"])
    )
    assert payout_draft_create(by=maker, environment=offline, values=values).pk


def _token(user: StaffUser) -> str:
    from staff.api_tokens import api_token_create, scopes_within_role

    # Every scope the person's roles reach (a token is made with no other).
    return api_token_create(user=user, name="t", scopes=scopes_within_role(user), days=30).plaintext


def test_its_creator_cannot_approve_it(
    offline: Environment, staff: dict[str, StaffUser], default_policy: None
) -> None:
    compliance = stepped_up(staff["compliance"])
    recipient = pending_recipient(offline, compliance)
    with pytest.raises(ServiceError) as refused:
        recipient_approve(recipient=recipient, by=compliance)
    assert refused.value.code == "recipient_creator"
    assert refused.value.status == 403
    recipient.refresh_from_db()
    assert recipient.status == RecipientStatus.PENDING_APPROVAL


def test_a_wrong_role_cannot_approve_and_the_policy_hook_names_the_roles(
    offline: Environment, staff: dict[str, StaffUser], default_policy: None
) -> None:
    recipient = pending_recipient(offline, staff["finance_maker"])
    with pytest.raises(PermissionDenied):  # a maker holds no approval permission at all
        recipient_approve(recipient=recipient, by=stepped_up(staff["finance_maker"]))
    with pytest.raises(ServiceError) as refused:  # an admin's role is not in the default list
        recipient_approve(recipient=recipient, by=stepped_up(staff["admin"]))
    assert refused.value.code in ("role_not_allowed", "not_permitted")

    # A policy (payouts, E3) registers its own list: then only compliance may.
    register_recipient_approver_roles(lambda: ["compliance"])
    with pytest.raises(ServiceError) as refused:
        recipient_approve(recipient=recipient, by=stepped_up(staff["finance_approver"]))
    assert refused.value.code == "role_not_allowed"
    assert "compliance" in refused.value.message
    approved = recipient_approve(recipient=recipient, by=stepped_up(staff["compliance"]))
    assert approved.status == RecipientStatus.APPROVED


def test_approving_needs_step_up_and_is_audited_with_before_and_after(
    offline: Environment, staff: dict[str, StaffUser], default_policy: None
) -> None:
    recipient = pending_recipient(offline, staff["finance_maker"])
    approver = staff["finance_approver"]
    with pytest.raises(StepUpRequired) as asked:
        recipient_approve(recipient=recipient, by=approver)
    assert asked.value.action == "recipient.approve"
    recipient.refresh_from_db()
    assert recipient.status == RecipientStatus.PENDING_APPROVAL

    approved = recipient_approve(recipient=recipient, by=stepped_up(approver))
    assert (approved.status, approved.approved_by) == (RecipientStatus.APPROVED, approver)
    entry = AuditEntry.objects.get(action="recipient.approved")
    assert entry.details["before"]["status"] == "pending_approval"
    assert entry.details["after"]["status"] == "approved"
    assert entry.details["after"]["account_number"] == "…6789"
    assert recipient_not_payable_reason(approved) == ""


def test_rejecting_needs_a_reason_and_leaves_it_unpayable(
    offline: Environment, staff: dict[str, StaffUser], default_policy: None
) -> None:
    recipient = pending_recipient(offline, staff["finance_maker"])
    approver = stepped_up(staff["finance_approver"])
    with pytest.raises(ServiceError) as refused:
        recipient_reject(recipient=recipient, by=approver, reason="  ")
    assert [e.field for e in refused.value.errors] == ["reason"]
    rejected = recipient_reject(recipient=recipient, by=approver, reason="Name does not match")
    assert rejected.status == RecipientStatus.REJECTED
    assert "Name does not match" in recipient_not_payable_reason(rejected)
    assert AuditEntry.objects.get(action="recipient.rejected").details["reason"] == (
        "Name does not match"
    )


def test_an_archived_recipient_is_not_payable_hidden_from_pickers_and_listed_under_its_filter(
    offline: Environment, staff: dict[str, StaffUser], default_policy: None
) -> None:
    maker = staff["finance_maker"]
    recipient = make_recipient(offline, make_end_user(offline), created_by=maker)
    payout = payout_draft_create(
        by=maker, environment=offline, values=draft_values(offline, recipient)
    )
    Payout.objects.filter(pk=payout.pk).update(status="pending_approval")
    assert recipient in payout_recipients(offline)

    recipient_archive(recipient=recipient, by=staff["compliance"], reason="Closed account")
    recipient.refresh_from_db()
    assert recipient.status == RecipientStatus.ARCHIVED
    assert recipient not in payout_recipients(offline)
    # Approving the payout waiting for it is refused, nothing half done.
    with pytest.raises(PayoutActionRefused) as refused:
        payout_approve(payout=payout.pk, by=stepped_up(staff["finance_approver"]))
    assert refused.value.code == "recipient_not_approved"
    assert [e.field for e in refused.value.errors] == ["recipient"]
    assert Approval.objects.count() == 0
    assert Payout.objects.get(pk=payout.pk).status == "pending_approval"

    api = ApiClient(_token(staff["finance_approver"]))
    assert [r["id"] for r in api.get("recipients").json()["items"]] == []
    listed = api.get("recipients", status="archived").json()["items"]
    assert [(r["id"], r["status"]) for r in listed] == [(recipient.pk, "archived")]


# --- changes: not payable until approved, mirrored as a new upstream recipient ----------------


def test_a_change_waits_for_approval_then_is_a_new_upstream_recipient_with_full_history(
    sandbox: Environment, staff: dict[str, StaffUser], live_emulator: Any, default_policy: None
) -> None:
    end_user = end_user_create(environment=sandbox, by=staff["compliance"], **user_values())
    maker, approver = staff["finance_maker"], stepped_up(staff["finance_approver"])
    compliance = stepped_up(staff["compliance"])

    def upstream_recipients() -> list[Any]:
        listed = call_sync(upstream(sandbox).recipients.list, user_id=end_user.upstream_id)
        return list(listed.recipients)

    original = recipient_create(end_user=end_user, by=maker, values=WIRE_RECIPIENT)
    assert original.status == RecipientStatus.PENDING_APPROVAL
    original = recipient_approve(recipient=original, by=approver)
    assert len(upstream_recipients()) == 1

    # Compliance proposes new bank details: nothing goes upstream, the old details stay payable.
    change = recipient_change_propose(
        recipient=original,
        by=compliance,
        values={"account_number": "555566667777", "bank_name": "Wells Fargo"},
    )
    assert change.before == {"account_number": "…6789", "bank_name": "Chase"}
    assert change.after == {"account_number": "…7777", "bank_name": "Wells Fargo"}
    assert len(upstream_recipients()) == 1
    original.refresh_from_db()
    assert recipient_not_payable_reason(original) == ""

    # Its author cannot approve it (nor can a second change be stacked on it).
    with pytest.raises(ServiceError) as refused:
        recipient_approve(recipient=original, by=compliance)
    assert refused.value.code == "change_author"
    with pytest.raises(ServiceError) as refused:
        recipient_change_propose(recipient=original, by=maker, values={"city": "Dallas"})
    assert refused.value.code == "change_pending"
    assert len(upstream_recipients()) == 1

    # A second person approves: a new upstream recipient; the old one is superseded.
    new = recipient_approve(recipient=original, by=approver)
    assert new.pk != original.pk
    upstream_now = upstream_recipients()
    assert len(upstream_now) == 2
    assert new.upstream_id in {r.recipient_id for r in upstream_now}
    assert new.upstream_id != original.upstream_id
    assert (new.status, new.account_number, new.supersedes_id) == (
        RecipientStatus.APPROVED,
        "555566667777",
        original.pk,
    )
    assert new.created_by == staff["compliance"]  # the details' author: may not approve payouts
    original.refresh_from_db()
    assert original.status == RecipientStatus.SUPERSEDED
    assert "changed" in recipient_not_payable_reason(original)
    # Approving again does not register a third one.
    with pytest.raises(ServiceError):
        recipient_approve(recipient=original, by=approver)
    assert len(upstream_recipients()) == 2

    history = recipient_history(new)
    assert [
        (v["version"], v["recipient_id"], v["status"], v["registered_by"], v["approved_by"])
        for v in history["versions"]
    ] == [
        (1, original.pk, "superseded", maker.email, approver.email),
        (2, new.pk, "approved", compliance.email, approver.email),
    ]
    assert history["versions"][0]["details"]["account_number"] == "…6789"
    assert [
        (c["status"], c["proposed_by"], c["decided_by"], c["before"], c["after"])
        for c in history["changes"]
    ] == [
        (
            "approved",
            compliance.email,
            approver.email,
            {"account_number": "…6789", "bank_name": "Chase"},
            {"account_number": "…7777", "bank_name": "Wells Fargo"},
        )
    ]
    assert RecipientChange.objects.get().new_recipient == new
    assert AuditEntry.objects.filter(action="recipient.change_approved").count() == 1


# --- the first-payout flag --------------------------------------------------------------------


def test_the_inbox_and_the_payout_page_flag_the_first_payout_to_new_or_changed_details(
    offline: Environment, staff: dict[str, StaffUser], default_policy: None
) -> None:
    maker, approver = staff["finance_maker"], staff["finance_approver"]
    recipient = make_recipient(offline, make_end_user(offline), created_by=staff["compliance"])
    payout = payout_draft_create(
        by=maker, environment=offline, values=draft_values(offline, recipient)
    )
    Payout.objects.filter(pk=payout.pk).update(status="pending_approval")
    client = client_signed_in(approver)
    session = client.session
    session["environment_id"] = offline.pk
    session.save()
    _use_environment(approver, offline)

    inbox = client.get("/payouts/approvals/").content.decode()
    assert "First payout to this recipient" in inbox
    page = client.get(f"/payouts/{payout.pk}/").content.decode()
    assert "First payout to this recipient" in page

    # Once money went to these details, no flag.
    other = payout_draft_create(
        by=maker, environment=offline, values=draft_values(offline, recipient)
    )
    Payout.objects.filter(pk=other.pk).update(upstream_id="po-earlier", status="completed")
    assert (
        "First payout to this recipient" not in client.get("/payouts/approvals/").content.decode()
    )

    # A changed recipient (a new version superseding the old) says when its details changed.
    changed = make_recipient(
        offline, recipient.end_user, created_by=staff["compliance"], supersedes=recipient
    )
    Payout.objects.filter(pk=payout.pk).update(recipient=changed)
    assert "Bank details changed" in client.get("/payouts/approvals/").content.decode()


def _use_environment(user: StaffUser, environment: Environment) -> None:
    from gateway.services.environments import environment_switch

    environment_switch(user=user, environment=environment)


# --- per role: pages and API ------------------------------------------------------------------


@pytest.fixture
def nobody(db: None) -> StaffUser:
    return StaffUser.objects.create_user("norole@payops.test", "pw-not-secret-123")


ROLES = ("finance_maker", "finance_approver", "compliance", "admin", "nobody")


def _people(staff: dict[str, StaffUser], nobody: StaffUser) -> dict[str, StaffUser]:
    return {**staff, "nobody": nobody}


def test_each_roles_reach_on_the_recipient_pages(
    offline: Environment,
    staff: dict[str, StaffUser],
    nobody: StaffUser,
    default_policy: None,
) -> None:
    people = _people(staff, nobody)
    recipient = make_recipient(offline, make_end_user(offline), created_by=staff["finance_maker"])
    expected = {  # queue, edit page
        "finance_maker": (200, 200),
        "finance_approver": (200, 403),
        "compliance": (200, 200),
        "admin": (200, 200),
        "nobody": (403, 403),
    }
    for role in ROLES:
        client = _signed_in(people[role], offline)
        queue = client.get("/accounts/recipients/approvals/")
        edit = client.get(f"/accounts/recipients/{recipient.pk}/edit/")
        assert (queue.status_code, edit.status_code) == expected[role], role

    # Deciding: only approvers and compliance (the default policy), never the creator.
    for role, status in (("finance_maker", 403), ("admin", 302), ("nobody", 403)):
        waiting = pending_recipient(offline, staff["compliance"])
        answer = _signed_in(people[role], offline).post(
            f"/accounts/recipients/{waiting.pk}/approve/"
        )
        assert answer.status_code == status, role
        waiting.refresh_from_db()
        assert waiting.status == RecipientStatus.PENDING_APPROVAL, role
    waiting = pending_recipient(offline, staff["compliance"])
    answer = _signed_in(staff["finance_approver"], offline).post(
        f"/accounts/recipients/{waiting.pk}/approve/", {"from": "queue"}
    )
    assert answer.status_code == 302
    waiting.refresh_from_db()
    assert waiting.status == RecipientStatus.APPROVED

    # Archiving: managers (maker, compliance, admin).
    for role, status in (("finance_approver", 403), ("nobody", 403), ("finance_maker", 302)):
        target = make_recipient(offline, make_end_user(offline), created_by=staff["compliance"])
        answer = _signed_in(people[role], offline).post(
            f"/accounts/recipients/{target.pk}/archive/"
        )
        assert answer.status_code == status, role
        target.refresh_from_db()
        assert (target.status == RecipientStatus.ARCHIVED) == (status == 302), role


def test_the_queue_page_lists_new_and_changed_recipients_with_their_diff(
    offline: Environment, staff: dict[str, StaffUser], default_policy: None
) -> None:
    new = pending_recipient(offline, staff["finance_maker"])
    approved = make_recipient(offline, make_end_user(offline), created_by=staff["finance_maker"])
    recipient_change_propose(
        recipient=approved, by=staff["finance_maker"], values={"account_number": "99990000"}
    )
    page = _signed_in(staff["finance_approver"], offline).get("/accounts/recipients/approvals/")
    html = page.content.decode()
    assert html.count('data-testid="approval-item"') == 2
    assert f"/accounts/recipients/{new.pk}/" in html
    assert "…0000" in html and "99990000" not in html
    # The maker sees the queue, but no buttons for what they may not decide.
    mine = _signed_in(staff["finance_maker"], offline).get("/accounts/recipients/approvals/")
    assert 'data-testid="recipient-approve"' not in mine.content.decode()


def _signed_in(user: StaffUser, environment: Environment) -> Client:
    if user.groups.exists() or user.is_superuser:
        _use_environment(user, environment)
        return client_signed_in(user)
    client = Client()
    client.force_login(user)
    return client


def test_each_roles_reach_on_the_recipient_api(
    offline: Environment,
    staff: dict[str, StaffUser],
    nobody: StaffUser,
    default_policy: None,
) -> None:
    people = _people(staff, nobody)
    for role in ROLES:
        _use_environment(people[role], offline)
    tokens = {role: ApiClient(_token(people[role])) for role in ROLES if role != "nobody"}
    tokens["nobody"] = _session_api(nobody)  # no role, no token: their session
    reader_status = {role: 200 for role in ROLES} | {"nobody": 403}
    for role in ROLES:
        recipient = make_recipient(
            offline, make_end_user(offline), created_by=staff["finance_maker"]
        )
        api = tokens[role]
        assert api.get("recipients", status="pending").status_code == reader_status[role], role
        history = api.get(f"recipients/{recipient.pk}/history")
        assert history.status_code == reader_status[role], role
        patch = api.patch(f"recipients/{recipient.pk}", {"account": {"account_number": "4321"}})
        manager = role in ("finance_maker", "compliance", "admin")
        assert patch.status_code == (202 if manager else 403), (role, patch.content)

        waiting = pending_recipient(offline, staff["compliance"])
        approve = api.post(f"recipients/{waiting.pk}/approve")
        decider = role == "finance_approver"  # compliance created it: refused as its creator
        assert approve.status_code == (200 if decider else 403), (role, approve.content)
        reject_target = pending_recipient(offline, staff["finance_maker"])
        reject = api.post(f"recipients/{reject_target.pk}/reject", {"reason": "Wrong IBAN"})
        may_reject = role in ("finance_approver", "compliance")
        assert reject.status_code == (200 if may_reject else 403), (role, reject.content)
        archive = api.post(f"recipients/{recipient.pk}/archive", {"reason": ""})
        assert archive.status_code == (200 if manager else 403), (role, archive.content)


def _session_api(user: StaffUser) -> ApiClient:
    api = ApiClient("")
    api.client.force_login(user)
    api._headers = dict  # type: ignore[method-assign]
    return api


def test_the_api_shows_the_status_queue_and_refuses_bad_input_on_its_field(
    offline: Environment, staff: dict[str, StaffUser], default_policy: None
) -> None:
    _use_environment(staff["finance_maker"], offline)
    _use_environment(staff["finance_approver"], offline)
    waiting = pending_recipient(offline, staff["finance_maker"])
    maker = ApiClient(_token(staff["finance_maker"]))
    approver = ApiClient(_token(staff["finance_approver"]))
    queue = approver.get("recipients", status="pending").json()["items"]
    assert [(r["id"], r["status"], r["approved_by"]) for r in queue] == [
        (waiting.pk, "pending_approval", None)
    ]
    assert approver.post(f"recipients/{waiting.pk}/reject", {"reason": ""}).status_code == 400
    done = approver.post(f"recipients/{waiting.pk}/approve").json()
    assert (done["status"], done["approved_by"]) == ("approved", staff["finance_approver"].email)
    bad = maker.patch(f"recipients/{waiting.pk}", {"account": {"routing_number": "123456789"}})
    assert bad.status_code == 400
    assert [e["field"] for e in bad.json()["errors"]] == ["account.routing_number"]
    same = maker.patch(f"recipients/{waiting.pk}", {"address": {"city": waiting.city}})
    assert (same.status_code, same.json()["code"]) == (400, "no_change")


def test_the_release_of_an_approved_payout_is_refused_once_its_recipient_is_archived(
    offline: Environment, staff: dict[str, StaffUser], default_policy: None
) -> None:
    from payouts.release.code import payout_otp_send

    maker = staff["finance_maker"]
    recipient = make_recipient(offline, make_end_user(offline), created_by=staff["compliance"])
    payout = payout_draft_create(
        by=maker, environment=offline, values=draft_values(offline, recipient)
    )
    Payout.objects.filter(pk=payout.pk).update(status="approved")
    recipient_archive(recipient=recipient, by=staff["compliance"])
    with pytest.raises(PayoutActionRefused) as refused:
        payout_otp_send(payout=payout.pk, by=stepped_up(staff["finance_approver"]))
    assert refused.value.code == "recipient_not_approved"
    assert "archived" in refused.value.message
    assert Payout.objects.get(pk=payout.pk).otp_sent_to == ""


def test_each_roles_reach_on_rejecting_and_proposing_a_change_from_the_pages(
    offline: Environment,
    staff: dict[str, StaffUser],
    nobody: StaffUser,
    default_policy: None,
) -> None:
    people = _people(staff, nobody)
    # (status code, whether it was rejected): the creator here is the maker.
    expected_reject = {
        "finance_maker": (403, False),
        "finance_approver": (302, True),
        "compliance": (302, True),
        "admin": (302, False),  # signed in, but no role the policy names: refused in words
        "nobody": (403, False),
    }
    expected_edit = {
        "finance_maker": 302,
        "finance_approver": 403,
        "compliance": 302,
        "admin": 302,
        "nobody": 403,
    }
    for role in ROLES:
        client = _signed_in(people[role], offline)
        waiting = pending_recipient(offline, staff["finance_maker"])
        answer = client.post(
            f"/accounts/recipients/{waiting.pk}/reject/", {"reason": "Unclear beneficiary"}
        )
        waiting.refresh_from_db()
        status, rejected = expected_reject[role]
        assert answer.status_code == status, role
        assert (waiting.status == RecipientStatus.REJECTED) == rejected, role

        approved = make_recipient(offline, make_end_user(offline), created_by=staff["compliance"])
        form = {**WIRE_RECIPIENT, "account_number": "222233334444"}
        answer = client.post(f"/accounts/recipients/{approved.pk}/edit/", form)
        assert answer.status_code == expected_edit[role], (role, answer.content[:300])
        proposed = RecipientChange.objects.filter(recipient=approved).first()
        assert (proposed is not None) == (expected_edit[role] == 302), role
        if proposed is not None:
            assert proposed.after["account_number"] == "…4444"
            approved.refresh_from_db()
            assert approved.account_number == "123456789"  # unchanged until approved
