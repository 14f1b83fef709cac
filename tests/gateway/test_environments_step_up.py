"""Step-up (`environment.credentials`) on environments: adding one, replacing a credential,
changing where credentials go (base URL) or where release codes go (verification email)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from gateway.models import Environment, EnvironmentKind
from gateway.services.environments import environment_create, environment_update
from staff.models import AuditEntry, StaffUser
from staff.step_up import StepUpRequired
from tests.gateway.test_environments_views import _environment, _form_data, _user
from tests.identity import client_signed_in, stepped_up

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin() -> StaffUser:
    return _user("admin-step-up@example.test", "admin")


def _values() -> dict[str, object]:
    return {
        "name": "Sandbox B",
        "kind": EnvironmentKind.SANDBOX,
        "base_url": "https://api.example.test",
        "client_id": "cid-0001",
        "password": "pw-0001-secret",
        "api_key": "key-0001-secret",
    }


def test_create_without_a_second_factor_is_refused_and_stores_nothing(admin: StaffUser) -> None:
    with pytest.raises(StepUpRequired) as refused:
        environment_create(by=admin, **_values())  # type: ignore[arg-type]
    assert (refused.value.status, refused.value.code) == (403, "step_up_required")
    assert refused.value.action == "environment.credentials"
    assert not Environment.objects.exists()
    assert not AuditEntry.objects.filter(action="environment.created").exists()
    environment_create(by=stepped_up(admin), **_values())  # type: ignore[arg-type]
    assert Environment.objects.count() == 1


@pytest.mark.parametrize(
    "change",
    [
        {"api_key": "key-0002-secret"},
        {"password": "pw-0002-secret"},
        {"client_id": "cid-0002"},
        {"base_url": "https://elsewhere.example.test"},
        {"verification_email": "codes@elsewhere.example.test"},
    ],
)
def test_sensitive_updates_need_a_fresh_second_factor(
    admin: StaffUser, change: dict[str, str]
) -> None:
    environment = _environment()
    before = Environment.objects.get(pk=environment.pk)
    with pytest.raises(StepUpRequired):
        environment_update(environment=environment, by=admin, **change)  # type: ignore[arg-type]
    after = Environment.objects.get(pk=environment.pk)
    assert (after.base_url, after.verification_email, after.api_key, after.password) == (
        before.base_url,
        before.verification_email,
        before.api_key,
        before.password,
    )
    assert not AuditEntry.objects.filter(action="environment.updated").exists()
    environment_update(environment=environment, by=stepped_up(admin), **change)  # type: ignore[arg-type]
    assert AuditEntry.objects.filter(action="environment.updated").count() == 1


def test_limits_and_unchanged_values_need_no_second_factor(admin: StaffUser) -> None:
    environment = _environment()
    environment_update(
        environment=environment,
        by=admin,
        weekly_budget=500,
        base_url=environment.base_url,  # the form sends every field back: unchanged is fine
        verification_email=environment.verification_email,
    )
    assert Environment.objects.get(pk=environment.pk).weekly_budget == 500


def test_the_system_needs_no_second_factor() -> None:
    """by=None: the sandbox bootstrap or a command at the shell, not a staff session."""
    environment = environment_create(by=None, **_values())  # type: ignore[arg-type]
    environment_update(environment=environment, by=None, api_key="key-0003-secret")


def _next_of(location: str) -> str:
    parts = urlsplit(location)
    assert parts.path == reverse("staff:step_up")
    return parse_qs(parts.query)["next"][0]


def test_the_add_page_without_freshness_shows_the_notice_and_redirects_a_post(
    admin: StaffUser,
) -> None:
    client = client_signed_in(admin, second_factor=False)
    url = reverse("gateway:environment_add")
    assert 'data-testid="step-up-notice"' in client.get(url).content.decode()
    response = client.post(url, _form_data(), HTTP_REFERER=f"http://testserver{url}")
    assert response.status_code == 302 and _next_of(response["Location"]) == url
    assert not Environment.objects.exists()


def test_the_edit_page_redirects_a_credential_change_but_saves_limits(admin: StaffUser) -> None:
    environment = _environment()
    client = client_signed_in(admin, second_factor=False)
    url = reverse("gateway:environment_edit", args=[environment.pk])
    same = _form_data(name=environment.name, base_url=environment.base_url)
    same.update({"client_id": "", "password": "", "api_key": "", "weekly_budget": "700"})
    saved = client.post(url, same)
    assert saved.status_code == 302 and saved["Location"] == reverse("gateway:environments")
    assert Environment.objects.get(pk=environment.pk).weekly_budget == 700
    response = client.post(url, {**same, "api_key": "key-new-999"}, HTTP_REFERER=url)
    assert _next_of(response["Location"]) == url
    assert Environment.objects.get(pk=environment.pk).api_key != "key-new-999"


def test_with_a_fresh_second_factor_the_edit_page_shows_no_notice(admin: StaffUser) -> None:
    environment = _environment()
    html = (
        client_signed_in(admin)
        .get(reverse("gateway:environment_edit", args=[environment.pk]))
        .content.decode()
    )
    assert 'data-testid="step-up-notice"' not in html


@pytest.mark.parametrize("role", ["finance_maker", "finance_approver", "compliance"])
def test_other_roles_get_403_not_a_step_up(role: str) -> None:
    client = client_signed_in(_user(f"{role}-su@example.test", role), second_factor=False)
    response = client.post(reverse("gateway:environment_add"), _form_data())
    assert response.status_code == 403


def test_a_credential_change_waiting_for_a_second_admin_is_not_called_saved(
    admin: StaffUser,
) -> None:
    _user("admin-two@example.test", "admin")  # another admin: the change waits for them
    environment = _environment()
    client = client_signed_in(admin)
    url = reverse("gateway:environment_edit", args=[environment.pk])
    data = _form_data(name=environment.name, base_url=environment.base_url)
    data.update({"client_id": "", "password": "", "api_key": "key-new-999"})
    page = client.post(url, data, follow=True).content.decode()
    assert "waits for a second admin&#x27;s approval" in page
    assert f"Environment {environment.name} saved." not in page
