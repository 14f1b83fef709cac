"""Every role that may act with step-up has a second factor: a start-up check holds the role table
to it, the compliance demo login comes enrolled and approves a recipient, and enrolment (from the
sign-in gate or the step-up prompt) comes back to the page the person was going to."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client

from accounts.models import Recipient, RecipientStatus
from gateway.models import Environment
from gateway.services.environments import environment_switch
from staff.checks import roles_without_second_factor
from staff.models import AuthenticatorDevice, StaffUser
from staff.roles import (
    FINANCE_VIEW,
    PAYOUT_APPROVE,
    RECIPIENTS_APPROVE,
    ROLES,
    Role,
    roles_sync,
)
from staff.second_factor.demo import demo_code_hint
from staff.second_factor.totp import totp_current_code
from tests.finance import make_end_user, make_environment, make_recipient

PASSWORD = "pw-step-up-roles-1"


def _role(key: str, *permissions: str) -> Role:
    return Role(
        key=key,
        display_name=key,
        description="",
        duties=(),
        permissions=permissions,
        demo_email=f"{key}@example.test",
    )


def test_a_role_table_with_a_step_up_role_that_never_enrols_fails_the_start_up_check(
    settings: Any, db: None
) -> None:
    table = [_role("checker", FINANCE_VIEW, RECIPIENTS_APPROVE), _role("reader", FINANCE_VIEW)]
    assert [
        (role.key, perms)
        for role, perms in roles_without_second_factor(table, second_factor_roles=["reader"])
    ] == [("checker", [RECIPIENTS_APPROVE])]
    assert roles_without_second_factor(table, second_factor_roles=["checker"]) == []

    call_command("check")  # the shipped roles and settings pass
    # A deployment that leaves compliance (which approves recipients) out of the setting fails.
    settings.PAYOPS_SECOND_FACTOR_ROLES = ["finance_approver", "admin", "auditor"]
    with pytest.raises(SystemCheckError, match=r"staff\.E001.*'compliance'"):
        call_command("check")


def test_the_shipped_roles_that_approve_are_all_second_factor_roles(settings: Any) -> None:
    approvers = {r.key for r in ROLES if {PAYOUT_APPROVE, RECIPIENTS_APPROVE} & set(r.permissions)}
    assert approvers == {"finance_approver", "compliance"}
    assert approvers <= set(settings.PAYOPS_SECOND_FACTOR_ROLES)


@pytest.fixture
def offline(db: None) -> Environment:
    return make_environment()


def _pending_recipient(environment: Environment, creator: StaffUser) -> Recipient:
    return make_recipient(
        environment,
        make_end_user(environment),
        created_by=creator,
        status=RecipientStatus.PENDING_APPROVAL,
        approval_note="",
    )


def test_the_compliance_demo_login_signs_in_with_its_code_and_approves_a_recipient(
    offline: Environment, demo_staff: dict[str, StaffUser]
) -> None:
    compliance = demo_staff["compliance"]
    environment_switch(user=compliance, environment=offline)
    recipient = _pending_recipient(offline, demo_staff["finance_maker"])
    client = Client()
    signed = client.post("/login/", {"username": compliance.email, "password": "payops-demo"})
    assert signed.status_code == 302
    step = client.get("/login/second-factor/")
    code = demo_code_hint(compliance)
    assert code and step.context["demo_code"] == code  # the demo panel shows the current code
    assert b'data-testid="demo-code-compliance"' in Client().get("/login/").content
    client.post("/login/second-factor/", {"code": code})

    answer = client.post(f"/accounts/recipients/{recipient.pk}/approve/")
    assert answer.status_code == 302 and "/step-up/" not in answer["Location"]
    recipient.refresh_from_db()
    assert (recipient.status, recipient.approved_by) == (RecipientStatus.APPROVED, compliance)


def _codes_saved_href(page: Any) -> str:
    found = re.search(r'href="([^"]*)"[^>]*data-testid="codes-saved"', page.content.decode())
    assert found, page.content.decode()
    return found.group(1)


def _enrol_then_save_codes(client: Client, enrol_url: str, user: StaffUser) -> str:
    """Set up an authenticator app from `enrol_url`, as a person would; where "I have saved
    them" leads."""
    page = client.get(enrol_url)
    assert page.status_code == 200
    device = AuthenticatorDevice.objects.get(user=user, confirmed=False)
    confirmed = client.post(
        "/login/enrol/totp/", {"code": totp_current_code(device), "next": page.context["next"]}
    )
    assert confirmed.status_code == 302 and confirmed["Location"].startswith(
        "/login/recovery-codes/"
    )
    return _codes_saved_href(client.get(confirmed["Location"]))


def test_a_compliance_person_without_a_second_factor_enrols_and_lands_back_on_the_recipient(
    offline: Environment, demo_staff: dict[str, StaffUser]
) -> None:
    person = StaffUser.objects.create_user("new-compliance@example.test", PASSWORD)
    person.groups.add(Group.objects.get(name="compliance"))
    environment_switch(user=person, environment=offline)
    recipient = _pending_recipient(offline, demo_staff["finance_maker"])
    page = f"/accounts/recipients/{recipient.pk}/"
    client = Client()
    client.post("/login/", {"username": person.email, "password": PASSWORD})

    gated = client.get(page)
    assert gated.status_code == 302
    assert gated["Location"] == "/login/enrol/?" + urlencode({"next": page})
    assert _enrol_then_save_codes(client, gated["Location"], person) == page

    assert client.get(page).status_code == 200
    answer = client.post(f"/accounts/recipients/{recipient.pk}/approve/")
    assert "/step-up/" not in answer["Location"]
    recipient.refresh_from_db()
    assert recipient.status == RecipientStatus.APPROVED


def test_enrolment_from_the_step_up_prompt_keeps_where_the_person_was_going(
    offline: Environment, demo_staff: dict[str, StaffUser]
) -> None:
    """Someone without a second factor at the step-up prompt: "add an authenticator app", then
    every enrolment step (set-up, confirm, recovery codes) still leads back to the page."""
    roles_sync()
    person = StaffUser.objects.create_user("maker-enrols@example.test", PASSWORD)
    person.groups.add(Group.objects.get(name="finance_maker"))
    client = Client()
    client.post("/login/", {"username": person.email, "password": PASSWORD})
    back = "/accounts/recipients/?status=pending_approval"
    prompt = client.get("/step-up/?" + urlencode({"next": back})).content.decode()
    assert 'data-testid="no-second-factor"' in prompt
    link = re.search(r'href="([^"]*)" data-testid="enrol-link"', prompt)
    assert link is not None
    enrol_url = link.group(1).replace("&amp;", "&")
    assert urlsplit(enrol_url).path == "/login/enrol/"
    assert parse_qs(urlsplit(enrol_url).query)["next"] == [back]
    assert _enrol_then_save_codes(client, enrol_url, person).replace("&amp;", "&") == back
