"""Sandbox-only directory actions against the emulator: decide a `+review` user, simulate a
deposit; only for the roles allowed, clearly marked, absent where the sandbox app is not."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.test import Client

from accounts.virtual_accounts import virtual_account_create
from gateway.models import Environment
from staff.models import AuditEntry, StaffUser
from tests.directory.conftest import live_emulator, sandbox, staff, user_values  # noqa: F401
from tests.identity import client_signed_in
from users.models import EndUser
from users.services import end_user_create


def browser_for(user: StaffUser) -> Client:
    return client_signed_in(user)


def review_user(environment: Environment, staff: dict[str, StaffUser]) -> EndUser:  # noqa: F811
    return end_user_create(
        environment=environment, by=staff["compliance"], **user_values("rv+review@example.com")
    )


def test_compliance_accepts_a_review_user_from_the_detail_page(
    sandbox: Environment,  # noqa: F811
    staff: dict[str, StaffUser],  # noqa: F811
) -> None:
    user = review_user(sandbox, staff)
    client = browser_for(staff["compliance"])
    page = client.get(f"/end-users/{user.pk}/").content.decode()
    assert 'data-testid="sandbox-decide"' in page and "Sandbox action" in page
    assert (
        browser_for(staff["finance_maker"])
        .post(f"/sandbox/end-users/{user.pk}/decide/", {"decision": "accept"})
        .status_code
        == 403
    )
    client.post(f"/sandbox/end-users/{user.pk}/decide/", {"decision": "accept"})
    user.refresh_from_db()
    assert user.verification_status == "verified"
    assert AuditEntry.objects.filter(
        action="sandbox.end_user_decided", actor=staff["compliance"]
    ).exists()
    assert (
        'data-testid="sandbox-decide"' not in client.get(f"/end-users/{user.pk}/").content.decode()
    )


def test_compliance_rejects_a_review_user(
    sandbox: Environment,  # noqa: F811
    staff: dict[str, StaffUser],  # noqa: F811
) -> None:
    user = review_user(sandbox, staff)
    browser_for(staff["compliance"]).post(
        f"/sandbox/end-users/{user.pk}/decide/", {"decision": "reject", "reason": "face_mismatch"}
    )
    user.refresh_from_db()
    assert user.verification_status == "rejected"


def test_an_admin_simulates_a_deposit_and_sees_the_balance(
    sandbox: Environment,  # noqa: F811
    staff: dict[str, StaffUser],  # noqa: F811
    live_emulator: Any,  # noqa: F811
) -> None:
    user = end_user_create(environment=sandbox, by=staff["compliance"], **user_values())
    va = virtual_account_create(end_user=user, mode="fiat", by=staff["finance_maker"])
    live_emulator.advance(30)
    live_emulator.control("POST", "tick")
    admin = browser_for(staff["admin"])
    admin.post(f"/accounts/virtual-accounts/{va.pk}/refresh/")
    assert (
        'data-testid="sandbox-deposit"'
        in admin.get(f"/accounts/virtual-accounts/{va.pk}/").content.decode()
    )
    refused = browser_for(staff["compliance"]).post(
        f"/sandbox/virtual-accounts/{va.pk}/deposit/", {"amount": "10.00"}
    )
    assert refused.status_code == 403
    admin.post(f"/sandbox/virtual-accounts/{va.pk}/deposit/", {"amount": "1500.00"})
    va.refresh_from_db()
    assert va.available_balance == Decimal("1500.00") and va.balance_as_of is not None
    admin.post(f"/sandbox/virtual-accounts/{va.pk}/deposit/", {"amount": "abc"})
    va.refresh_from_db()
    assert va.available_balance == Decimal("1500.00")
    # Arabic-Indic ten and a padded ten are not amounts (console.inputs), nothing is deposited.
    for typed in ("\u0661\u0660", " 10 "):
        admin.post(f"/sandbox/virtual-accounts/{va.pk}/deposit/", {"amount": typed})
    assert live_emulator.witness.count("/deposits", "POST") == 1
    va.refresh_from_db()
    assert va.available_balance == Decimal("1500.00")


def test_a_maker_funds_their_sandbox_account_without_an_admin(
    sandbox: Environment,  # noqa: F811
    staff: dict[str, StaffUser],  # noqa: F811
    live_emulator: Any,  # noqa: F811
) -> None:
    """Who prepares payouts puts test money on the sandbox account they will pay from."""
    user = end_user_create(environment=sandbox, by=staff["compliance"], **user_values())
    va = virtual_account_create(end_user=user, mode="fiat", by=staff["finance_maker"])
    live_emulator.advance(30)
    live_emulator.control("POST", "tick")
    maker = browser_for(staff["finance_maker"])
    maker.post(f"/accounts/virtual-accounts/{va.pk}/refresh/")
    page = maker.get(f"/accounts/virtual-accounts/{va.pk}/").content.decode()
    assert 'data-testid="sandbox-deposit"' in page
    answer = maker.post(f"/sandbox/virtual-accounts/{va.pk}/deposit/", {"amount": "2500.00"})
    assert answer.status_code == 302
    va.refresh_from_db()
    assert va.available_balance == Decimal("2500.00") and va.balance_as_of is not None
    assert AuditEntry.objects.filter(
        action="sandbox.deposit_simulated", actor=staff["finance_maker"]
    ).exists()
    # An approver and an auditor read the account but put no money on it.
    for role in ("finance_approver", "auditor"):
        other = browser_for(staff[role])
        assert 'data-testid="sandbox-deposit"' not in (
            other.get(f"/accounts/virtual-accounts/{va.pk}/").content.decode()
        )
        refused = other.post(f"/sandbox/virtual-accounts/{va.pk}/deposit/", {"amount": "1.00"})
        assert refused.status_code == 403, role
    assert live_emulator.witness.count("/deposits", "POST") == 1


def test_pages_offer_no_sandbox_action_without_the_sandbox_app(
    sandbox: Environment,  # noqa: F811
    staff: dict[str, StaffUser],  # noqa: F811
    settings: Any,
) -> None:
    user = review_user(sandbox, staff)
    settings.INSTALLED_APPS = [app for app in settings.INSTALLED_APPS if app != "sandbox"]
    page = browser_for(staff["compliance"]).get(f"/end-users/{user.pk}/").content.decode()
    assert "Sandbox action" not in page and "sandbox-decide" not in page
