"""An admin resets a person's second factor (an admin change, staff.changes): a second admin
confirms; a single admin's reset applies after the wait; nobody resets themselves alone; the
person's sessions end; the break-glass command."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from staff.changes import ChangeRefused, changes_apply_due
from staff.models import AuditEntry, AuthenticatorDevice, ChangeProposal
from staff.roles import roles_sync
from staff.second_factor.models import RecoveryCodeDevice, SecondFactorReset
from staff.second_factor.recovery import recovery_codes_issue
from staff.second_factor.reset import (
    ResetRefused,
    second_factor_reset_confirm,
    second_factor_reset_request,
)
from staff.step_up import StepUpRequired
from tests.identity import client_signed_in, enrolled, stepped_up
from tests.staff.second_factor_support import password_signed_in, person

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _roles() -> None:
    roles_sync()


def _target():  # type: ignore[no-untyped-def]
    target = person("lost-phone@example.test", "finance_approver")
    enrolled(target)
    recovery_codes_issue(user=target, by=target)
    return target


def test_a_reset_waits_for_a_second_admin_who_applies_it_and_ends_the_persons_sessions() -> None:
    first = person("admin-one@example.test", "admin")
    second = person("admin-two@example.test", "admin")
    target = _target()
    their_session = client_signed_in(target)
    assert their_session.get("/profile/").status_code == 200

    reset = second_factor_reset_request(target=target, by=stepped_up(first), reason="lost phone")

    assert reset.state == ChangeProposal.State.PENDING
    assert AuthenticatorDevice.objects.filter(user=target).exists()
    with pytest.raises(ChangeRefused) as own:
        second_factor_reset_confirm(proposal=reset, by=stepped_up(first))
    assert own.value.code == "change_own_proposal"

    reset = second_factor_reset_confirm(proposal=reset, by=stepped_up(second))

    assert reset.state == ChangeProposal.State.APPLIED
    applied = SecondFactorReset.objects.get()
    assert applied.status == SecondFactorReset.Status.APPLIED
    assert applied.confirmed_by == second
    assert applied.requested_by == first
    assert not AuthenticatorDevice.objects.filter(user=target).exists()
    assert not RecoveryCodeDevice.objects.filter(user=target).exists()
    entry = AuditEntry.objects.get(action="staff.second_factor_reset_applied")
    assert entry.actor == second
    assert entry.details["how"] == "confirmed by a second admin"
    assert entry.details["change"]["proposed_by"] == first.email
    # Their session ended; at the next sign-in they must enrol again.
    assert their_session.get("/profile/")["Location"].startswith("/login/")
    assert password_signed_in(target).get("/")["Location"].startswith("/login/enrol/")


def test_with_a_single_admin_the_reset_applies_after_the_wait_and_the_audit_says_so() -> None:
    only = person("admin-only@example.test", "admin")
    target = _target()

    reset = second_factor_reset_request(target=target, by=stepped_up(only), reason="lost phone")

    assert reset.state == ChangeProposal.State.PENDING
    assert reset.apply_after is not None
    assert AuthenticatorDevice.objects.filter(user=target).exists()
    assert changes_apply_due(now=reset.apply_after) == 1
    assert not AuthenticatorDevice.objects.filter(user=target).exists()
    entry = AuditEntry.objects.get(action="staff.second_factor_reset_applied")
    assert entry.actor is None
    assert "single admin" in entry.details["how"]
    proposed = AuditEntry.objects.get(action="change.proposed")
    assert proposed.details["apply_after"]


def test_a_superuser_counts_as_the_second_admin() -> None:
    first = person("admin-first@example.test", "admin")
    person("root@example.test", superuser=True)

    reset = second_factor_reset_request(target=_target(), by=stepped_up(first), reason="x")

    assert reset.state == ChangeProposal.State.PENDING
    assert reset.apply_after is None  # the superuser can approve it: no wait


def test_an_admin_cannot_reset_themselves_alone_nor_confirm_a_reset_of_themselves() -> None:
    only = person("admin-self@example.test", "admin")
    enrolled(only)
    with pytest.raises(ResetRefused):
        second_factor_reset_request(target=only, by=stepped_up(only), reason="lost")
    assert AuthenticatorDevice.objects.filter(user=only).exists()

    other = person("admin-other@example.test", "admin")
    reset = second_factor_reset_request(target=only, by=stepped_up(other), reason="lost")
    with pytest.raises(ChangeRefused) as refused:
        second_factor_reset_confirm(proposal=reset, by=stepped_up(only))
    assert refused.value.code == "change_self"


def test_the_requester_needs_step_up_and_the_admin_role() -> None:
    admin = person("admin-stale@example.test", "admin")
    approver = person("approver-not-admin@example.test", "finance_approver")
    target = _target()

    with pytest.raises(StepUpRequired):
        second_factor_reset_request(target=target, by=admin, reason="x")
    with pytest.raises(ResetRefused) as refused:
        second_factor_reset_request(target=target, by=stepped_up(approver), reason="x")
    assert refused.value.code == "permission_denied"
    assert not ChangeProposal.objects.exists()


def test_the_reset_page_requests_and_a_second_admin_confirms() -> None:
    first = person("admin-page-one@example.test", "admin")
    second = person("admin-page-two@example.test", "admin")
    target = _target()

    stale = client_signed_in(first, second_factor=False)
    response = stale.post("/second-factor-resets/", {"target": target.pk, "reason": "lost"})
    assert response["Location"].startswith("/step-up/")
    assert not ChangeProposal.objects.exists()

    client = client_signed_in(first)
    response = client.post("/second-factor-resets/", {"target": target.pk, "reason": "lost"})
    assert response.status_code == 302
    reset = ChangeProposal.objects.get()
    page = client.get("/second-factor-resets/")
    assert b"another admin confirms" in page.content
    assert b'data-testid="confirm-reset"' not in page.content

    other = client_signed_in(second)
    assert b'data-testid="confirm-reset"' in other.get("/second-factor-resets/").content
    other.post(f"/second-factor-resets/{reset.pk}/confirm/")
    reset.refresh_from_db()
    assert reset.state == ChangeProposal.State.APPLIED
    assert not AuthenticatorDevice.objects.filter(user=target).exists()


def test_the_confirm_button_is_refused_to_non_admins() -> None:
    first = person("admin-confirm@example.test", "admin")
    person("admin-confirm-2@example.test", "admin")
    reset = second_factor_reset_request(target=_target(), by=stepped_up(first), reason="x")
    approver = person("approver-confirm@example.test", "finance_approver")

    response = client_signed_in(approver).post(f"/second-factor-resets/{reset.pk}/confirm/")

    assert response.status_code == 403
    reset.refresh_from_db()
    assert reset.state == ChangeProposal.State.PENDING


def test_the_break_glass_command_resets_at_once_audited() -> None:
    target = _target()

    call_command("second_factor_reset", target.email, "--reason", "ticket 42")

    assert not AuthenticatorDevice.objects.filter(user=target).exists()
    entry = AuditEntry.objects.get(action="staff.second_factor_reset_applied")
    assert entry.actor is None
    assert entry.details["how"] == "break-glass command on the server"
    with pytest.raises(CommandError):
        call_command("second_factor_reset", "nobody@example.test", "--reason", "x")


def test_sessions_made_before_any_reset_keep_djangos_own_hash() -> None:
    # Epoch 0 is Django's hash: deploying session_epoch signs nobody out; a reset then does.
    from django.utils.crypto import salted_hmac

    user = person("epoch@example.test", "finance_maker")
    djangos = salted_hmac(
        "django.contrib.auth.models.AbstractBaseUser.get_session_auth_hash",
        user.password,
        algorithm="sha256",
    ).hexdigest()
    assert user.get_session_auth_hash() == djangos
    user.session_epoch = 1
    assert user.get_session_auth_hash() != djangos
