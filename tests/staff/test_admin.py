"""Django admin: staff users by email with filters and search; the audit trail read-only."""

from __future__ import annotations

import pytest
from django.test import Client

from staff.audit import audit_record
from staff.models import AuditEntry, StaffUser

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(client_for) -> Client:  # type: ignore[no-untyped-def]
    return client_for("admin")


def test_admin_is_branded(admin_client_: Client) -> None:
    html = admin_client_.get("/admin/").content.decode()
    assert "PayOps administration" in html
    assert "Back office" in html


def test_staff_user_list_filters_and_searches(admin_client_: Client) -> None:
    response = admin_client_.get("/admin/staff/staffuser/", {"q": "approver"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "approver@payops.local" in html
    assert "maker@payops.local" not in html
    assert "finance_approver" in html  # the roles column
    filtered = admin_client_.get("/admin/staff/staffuser/", {"is_staff__exact": "1"})
    assert "admin@payops.local" in filtered.content.decode()
    assert "compliance@payops.local" not in filtered.content.decode()


def test_admin_adds_a_staff_user_by_email(admin_client_: Client) -> None:
    response = admin_client_.post(
        "/admin/staff/staffuser/add/",
        {
            "email": "New.Person@PayOps.local",
            "usable_password": "true",
            "password1": "a-long-enough-password-9",
            "password2": "a-long-enough-password-9",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    user = StaffUser.objects.get(email="new.person@payops.local")
    assert user.check_password("a-long-enough-password-9")


def test_admin_refuses_a_duplicate_email_in_another_case(admin_client_: Client) -> None:
    response = admin_client_.post(
        "/admin/staff/staffuser/add/",
        {"email": "MAKER@payops.local", "usable_password": "false"},
    )
    assert response.status_code == 200
    assert "already exists" in response.content.decode()


def test_admin_changes_a_staff_user(admin_client_: Client) -> None:
    maker = StaffUser.objects.get(email="maker@payops.local")
    page = admin_client_.get(f"/admin/staff/staffuser/{maker.pk}/change/")
    assert page.status_code == 200
    assert "Roles and permissions" in page.content.decode()


def test_audit_entries_are_read_only(admin_client_: Client) -> None:
    entry = audit_record(actor=None, action="tests.something", details={"n": 1})
    listing = admin_client_.get("/admin/staff/auditentry/")
    assert listing.status_code == 200
    assert "tests.something" in listing.content.decode()
    assert admin_client_.get("/admin/staff/auditentry/add/").status_code == 403
    assert admin_client_.get(f"/admin/staff/auditentry/{entry.pk}/delete/").status_code == 403
    view = admin_client_.get(f"/admin/staff/auditentry/{entry.pk}/change/")
    assert view.status_code == 200  # viewable, not editable
    admin_client_.post(f"/admin/staff/auditentry/{entry.pk}/change/", {"action": "edited"})
    entry.refresh_from_db()
    assert entry.action == "tests.something"
    assert AuditEntry.objects.filter(action="tests.something").count() == 1
