"""Each person chooses the language PayOps speaks to them: the profile page and
PUT /api/v1/me/language call staff.services.staff_language_set, audited; blank follows the
browser (Accept-Language), as does the sign-in page."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.urls import reverse

from staff.errors import ServiceError
from staff.models import AuditEntry, StaffUser
from staff.services import staff_language_set
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db


def test_the_service_saves_the_persons_own_choice_with_an_audit_entry(
    demo_staff: dict[str, StaffUser],
) -> None:
    person = demo_staff["finance_maker"]
    staff_language_set(user=person, language="pt-br", by=person)
    person.refresh_from_db()
    assert person.language == "pt-br"
    entry = AuditEntry.objects.get(action="staff.language_set")
    assert (entry.actor, entry.before, entry.after) == (
        person,
        {"language": ""},
        {"language": "pt-br"},
    )
    staff_language_set(user=person, language="pt-br", by=person)  # no change, no second entry
    assert AuditEntry.objects.filter(action="staff.language_set").count() == 1


def test_the_service_refuses_another_persons_choice_and_an_unknown_language(
    demo_staff: dict[str, StaffUser],
) -> None:
    person, admin = demo_staff["compliance"], demo_staff["admin"]
    with pytest.raises(PermissionDenied):
        staff_language_set(user=person, language="es", by=admin)
    with pytest.raises(ServiceError) as refused:
        staff_language_set(user=person, language="fr", by=person)
    assert refused.value.errors[0].field == "language"
    person.refresh_from_db()
    assert person.language == ""
    assert not AuditEntry.objects.filter(action="staff.language_set").exists()


@pytest.mark.parametrize(
    "role", ["finance_maker", "finance_approver", "compliance", "auditor", "admin"]
)
def test_every_role_chooses_on_the_profile_page_and_the_pages_follow(
    role: str, demo_staff: dict[str, StaffUser]
) -> None:
    person = demo_staff[role]
    client = client_signed_in(person)
    profile = client.get(reverse("profile:profile")).content.decode()
    assert 'data-testid="language-form"' in profile
    response = client.post(reverse("profile:language"), {"language": "es"})
    assert response.status_code == 302
    page = client.get(reverse("profile:profile"), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="es">' in page
    assert "Su perfil" in page  # the person's choice wins over the browser's English
    # Blank again: the browser's language decides.
    client.post(reverse("profile:language"), {"language": ""})
    page = client.get(reverse("profile:profile"), HTTP_ACCEPT_LANGUAGE="pt-BR").content.decode()
    assert '<html lang="pt-br">' in page and "Seu perfil" in page
    person.refresh_from_db()
    assert person.language == ""


def test_the_profile_page_refuses_an_unknown_language(demo_staff: dict[str, StaffUser]) -> None:
    person = demo_staff["finance_approver"]
    client = client_signed_in(person)
    client.post(reverse("profile:language"), {"language": "xx"})
    person.refresh_from_db()
    assert person.language == ""


def test_signed_out_the_profile_language_is_refused() -> None:
    response = Client().post(reverse("profile:language"), {"language": "es"})
    assert response.status_code == 302
    assert reverse("staff:login") in response["Location"]


@pytest.mark.parametrize(
    "role", ["finance_maker", "finance_approver", "compliance", "auditor", "admin"]
)
def test_every_role_chooses_through_the_api(role: str, demo_staff: dict[str, StaffUser]) -> None:
    person = demo_staff[role]
    client = client_signed_in(person)
    response = client.put(
        "/api/v1/me/language", {"language": "pt-br"}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert response.json() == {"language": "pt-br"}
    assert client.get("/api/v1/me").json()["language"] == "pt-br"
    refused = client.put("/api/v1/me/language", {"language": "de"}, content_type="application/json")
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"] == "language"
    person.refresh_from_db()
    assert person.language == "pt-br"


def test_the_api_refuses_someone_signed_out() -> None:
    response = Client().put(
        "/api/v1/me/language", json.dumps({"language": "es"}), content_type="application/json"
    )
    assert response.status_code == 401
