"""payops_bootstrap: roles, demo staff where allowed, other apps' steps; idempotent."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from console import bootstrap
from staff.bootstrap import DEMO_PASSWORD, DemoSeedingRefused, demo_logins, seed_demo_staff
from staff.models import AuditEntry, StaffUser
from staff.roles import ROLES

# Transactional: the sandbox step reaches the emulator over HTTP, served from another thread.
pytestmark = pytest.mark.django_db(transaction=True)

DEMO_EMAILS = {role.demo_email for role in ROLES}


def run_bootstrap() -> str:
    out = StringIO()
    call_command("payops_bootstrap", stdout=out)
    return out.getvalue()


def test_bootstrap_seeds_one_demo_user_per_role_and_prints_the_password() -> None:
    output = run_bootstrap()
    assert set(StaffUser.objects.values_list("email", flat=True)) >= DEMO_EMAILS
    for role in ROLES:
        user = StaffUser.objects.get(email=role.demo_email)
        assert list(user.groups.values_list("name", flat=True)) == [role.key]
        assert user.check_password(DEMO_PASSWORD)
    assert DEMO_PASSWORD in output
    assert "Bootstrap complete." in output


def test_only_the_demo_admin_is_a_django_admin_superuser() -> None:
    run_bootstrap()
    admin = StaffUser.objects.get(email="admin@payops.local")
    assert admin.is_staff and admin.is_superuser
    others = StaffUser.objects.filter(email__in=DEMO_EMAILS - {"admin@payops.local"})
    assert others.count() == 4
    assert not others.filter(is_staff=True).exists()
    assert not others.filter(is_superuser=True).exists()


def test_bootstrap_twice_changes_nothing() -> None:
    run_bootstrap()
    users = {u.email: (u.pk, u.password) for u in StaffUser.objects.filter(email__in=DEMO_EMAILS)}
    created_entries = AuditEntry.objects.filter(action="staff.demo_user_created").count()
    run_bootstrap()
    again = {u.email: (u.pk, u.password) for u in StaffUser.objects.filter(email__in=DEMO_EMAILS)}
    assert again == users
    assert AuditEntry.objects.filter(action="staff.demo_user_created").count() == created_entries
    assert created_entries == len(demo_logins())


def test_bootstrap_keeps_a_changed_demo_password_but_repairs_the_role() -> None:
    run_bootstrap()
    maker = StaffUser.objects.get(email="maker@payops.local")
    maker.set_password("a-new-local-password")
    maker.save()
    maker.groups.clear()
    run_bootstrap()
    maker.refresh_from_db()
    assert maker.check_password("a-new-local-password")
    assert list(maker.groups.values_list("name", flat=True)) == ["finance_maker"]


def test_bootstrap_refuses_to_seed_demo_staff_in_production(settings: SettingsWrapper) -> None:
    settings.PAYOPS_SEED_DEMO_STAFF = False
    settings.PAYOPS_ENVIRONMENT = "production"
    output = run_bootstrap()
    assert "demo staff not seeded" in output
    assert not StaffUser.objects.filter(email__in=DEMO_EMAILS).exists()
    with pytest.raises(DemoSeedingRefused):
        seed_demo_staff()
    assert demo_logins() == []


def test_a_step_that_refuses_makes_the_command_fail() -> None:
    def refuse() -> str:
        raise DemoSeedingRefused("not here")

    bootstrap.register_step("tests.refuse", refuse)
    try:
        with pytest.raises(CommandError, match="not here"):
            run_bootstrap()
    finally:
        bootstrap.BOOTSTRAP_STEPS[:] = [
            s for s in bootstrap.BOOTSTRAP_STEPS if s.name != "tests.refuse"
        ]


def test_other_apps_steps_run_in_order_and_replace_by_name() -> None:
    calls: list[str] = []
    bootstrap.register_step("tests.extra", lambda: calls.append("first") or "first ran")
    bootstrap.register_step("tests.extra", lambda: calls.append("second") or "second ran")
    try:
        output = run_bootstrap()
    finally:
        bootstrap.BOOTSTRAP_STEPS[:] = [
            s for s in bootstrap.BOOTSTRAP_STEPS if s.name != "tests.extra"
        ]
    assert calls == ["second"]
    assert "[tests.extra] second ran" in output
    names = [line.split("]")[0] for line in output.splitlines() if line.startswith("[")]
    assert names[:2] == ["[staff.roles", "[staff.demo_staff"]


def test_demo_logins_work_on_the_sign_in_page() -> None:
    run_bootstrap()
    response = Client().post(
        "/login/", {"username": "approver@payops.local", "password": DEMO_PASSWORD}
    )
    assert response.status_code == 302
    assert response["Location"] == "/"


@pytest.mark.django_db
def test_the_demo_has_a_second_admin_so_an_admin_change_is_approved_without_the_wait() -> None:
    """Admin changes need another admin (staff.changes): the embedded default seeds two, so a
    newcomer sees a change proposed by one and applied when the other approves it."""
    from staff.changes import change_approve
    from staff.models import ChangeProposal, StaffUser
    from staff.roles import DEMO_SECOND_ADMIN_EMAIL, roles_sync
    from staff.second_factor.reset import second_factor_reset_request
    from tests.identity import stepped_up

    roles_sync()
    by_role = {user.groups.get().name: user for user in seed_demo_staff(second_admin=True)}
    second = StaffUser.objects.get(email=DEMO_SECOND_ADMIN_EMAIL)
    assert (DEMO_SECOND_ADMIN_EMAIL in {email for _, email in demo_logins()}) is True
    proposal = second_factor_reset_request(
        target=by_role["finance_approver"], by=stepped_up(by_role["admin"]), reason="lost phone"
    )
    assert proposal.apply_after is None  # another admin exists: no waiting period
    change_approve(proposal=proposal, by=stepped_up(second))
    proposal.refresh_from_db()
    assert proposal.state == ChangeProposal.State.APPLIED
