"""A credential whose key was rotated away: the edit page shows it unreadable and asks for it."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from gateway.models import Environment, EnvironmentKind
from gateway.models.environment import UNREADABLE
from gateway.services.environments import environment_create
from staff.changes import changes_apply_due
from staff.models import ChangeProposal, StaffUser
from staff.roles import roles_sync
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db

OLD_KEY = Fernet.generate_key().decode()
NEW_KEY = Fernet.generate_key().decode()


@pytest.fixture
def admin_client() -> Client:
    roles_sync()
    user = StaffUser.objects.create_user("admin-unreadable@example.test", "irrelevant-pw-1")
    user.groups.add(Group.objects.get(name="admin"))
    return client_signed_in(user)  # re-entering credentials needs a fresh second factor


@pytest.fixture
def orphaned(settings) -> Environment:  # type: ignore[no-untyped-def]
    """An environment whose credentials were encrypted with a key that is no longer configured."""
    settings.PAYOPS_ENCRYPTION_KEYS = [OLD_KEY]
    environment = environment_create(
        by=None,
        name="Orphaned sandbox",
        kind=EnvironmentKind.SANDBOX,
        base_url="https://api.example.test",
        client_id="client-0001-old",
        password="pw-0002-old",
        api_key="key-0003-old",
    )
    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY]
    return environment


def _form(**overrides: str) -> dict[str, str]:
    data = {
        "name": "Orphaned sandbox",
        "kind": "sandbox",
        "base_url": "https://api.example.test",
        "client_id": "",
        "password": "",
        "api_key": "",
        "rate_per_second": "10",
        "max_concurrent": "2",
        "weekly_budget": "10000",
        "background_share": "0.5",
        "is_active": "on",
    }
    data.update(overrides)
    return data


def test_the_edit_page_shows_unreadable_credentials_instead_of_failing(
    admin_client: Client, orphaned: Environment
) -> None:
    response = admin_client.get(reverse("gateway:environment_edit", args=[orphaned.pk]))

    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("Unreadable: the key it was encrypted with was removed. Enter it again.") == 3
    assert "Leave blank to keep the current value" not in html


def test_saving_without_reentering_an_unreadable_credential_asks_for_it_on_its_field(
    admin_client: Client, orphaned: Environment
) -> None:
    url = reverse("gateway:environment_edit", args=[orphaned.pk])

    response = admin_client.post(url, _form(weekly_budget="42", client_id="client-new-0001"))

    assert response.status_code == 200
    form = response.context["form"]
    assert set(form.errors) == {"password", "api_key"}
    assert form.errors["api_key"] == [
        "The stored value can no longer be decrypted: enter it again."
    ]
    orphaned.refresh_from_db()
    assert orphaned.weekly_budget == 10_000  # nothing half done


def test_reentering_the_credentials_makes_them_readable_under_the_current_key(
    admin_client: Client, orphaned: Environment
) -> None:
    url = reverse("gateway:environment_edit", args=[orphaned.pk])

    response = admin_client.post(
        url, _form(client_id="client-new-0001", password="pw-new-0002", api_key="key-new-0003")
    )

    assert response.status_code == 302
    # New credentials are an admin change (staff.changes); with this single admin it waits.
    proposal = ChangeProposal.objects.get(kind="environment.credentials")
    assert proposal.apply_after is not None
    assert changes_apply_due(now=proposal.apply_after) == 1
    orphaned.refresh_from_db()
    assert (orphaned.client_id, orphaned.password, orphaned.api_key) == (
        "client-new-0001",
        "pw-new-0002",
        "key-new-0003",
    )
    assert orphaned.credential_masked("api_key").endswith("0003")


def test_the_list_page_and_the_admin_say_unreadable_too(
    admin_client: Client, orphaned: Environment
) -> None:
    assert orphaned.credential_masked("password") == UNREADABLE
    listing = admin_client.get(reverse("gateway:environments")).content.decode()
    assert UNREADABLE in listing
