"""Environment rules: http(s) URLs without /sandbox, verified before use, production confirmed."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from gateway.models import Environment, EnvironmentKind, StaffEnvironmentChoice
from gateway.services.environments import (
    EnvironmentNotVerified,
    ProductionNotConfirmed,
    environment_create,
    environment_switch,
    environment_update,
    environment_verification_record,
)
from staff.models import AuditEntry, StaffUser
from tests.gateway.test_environments_views import (  # the same users and environments
    _environment,
    _form_data,
    admin_client,
    maker,
    maker_client,
)

pytestmark = pytest.mark.django_db
__all__ = ["admin_client", "maker", "maker_client"]  # fixtures, re-exported for pytest


@pytest.mark.parametrize(
    "base_url",
    ["ftp://files.example.test", "ftps://files.example.test", "file:///etc/passwd"],
)
def test_form_accepts_http_and_https_only(admin_client: Client, base_url: str) -> None:
    response = admin_client.post(reverse("gateway:environment_add"), _form_data(base_url=base_url))
    assert response.status_code == 200
    errors = response.context["form"].errors["base_url"]
    assert errors == ["Enter an http:// or https:// URL."] or "Enter a valid URL." in errors
    assert not Environment.objects.exists()
    html = response.content.decode()
    # The error is rendered on its field, which is marked invalid for assistive technology.
    field = html.split('data-field="base_url"')[1].split("</div>")[0]
    assert 'data-testid="field-error"' in field and 'aria-invalid="true"' in field


@pytest.mark.parametrize(
    "base_url", ["https://api.example.test/sandbox", "https://api.example.test/sandbox/"]
)
def test_form_refuses_a_base_url_ending_in_sandbox(admin_client: Client, base_url: str) -> None:
    response = admin_client.post(reverse("gateway:environment_add"), _form_data(base_url=base_url))
    assert response.status_code == 200
    (error,) = response.context["form"].errors["base_url"]
    assert error.startswith("Leave out /sandbox")
    assert "/sandbox/sandbox/" in error and "(https://api.example.test)" in error
    assert not Environment.objects.exists()


def test_form_accepts_http_and_https_service_roots(admin_client: Client) -> None:
    for name, url in (("Plain", "http://127.0.0.1:8001"), ("Tls", "https://api.example.test/v2")):
        response = admin_client.post(
            reverse("gateway:environment_add"), _form_data(name=name, base_url=url)
        )
        assert response.status_code == 302, response.context["form"].errors
    assert Environment.objects.count() == 2


def test_the_service_applies_the_same_url_rules() -> None:
    with pytest.raises(ValidationError) as refused:
        environment_create(
            by=None,
            name="Doubled",
            kind=EnvironmentKind.SANDBOX,
            base_url="https://api.example.test/sandbox",
            client_id="c",
            password="p",
            api_key="k",
        )
    assert "base_url" in refused.value.message_dict
    environment = _environment("Fine")
    with pytest.raises(ValidationError):
        environment_update(environment=environment, by=None, base_url="ftp://files.example.test")


def test_a_new_environment_is_unverified_and_cannot_be_switched_to(maker: StaffUser) -> None:
    environment = _environment("Fresh", verified=False)
    assert not environment.is_verified
    with pytest.raises(EnvironmentNotVerified):
        environment_switch(user=maker, environment=environment)
    assert not StaffEnvironmentChoice.objects.exists()


def test_changing_url_kind_or_a_credential_clears_the_verification() -> None:
    environment = _environment("Verified")
    environment_update(environment=environment, by=None, weekly_budget=500)
    assert Environment.objects.get(pk=environment.pk).is_verified  # limits: still proven
    for change in (
        {"base_url": "https://other.example.test"},
        {"kind": EnvironmentKind.PRODUCTION},
        {"password": "a-new-password"},
    ):
        environment_verification_record(
            environment=environment, by=None, verified=True, reason="test"
        )
        environment_update(environment=environment, by=None, **change)  # type: ignore[arg-type]
        assert not Environment.objects.get(pk=environment.pk).is_verified, change
    entry = AuditEntry.objects.filter(action="environment.updated").latest("pk")
    assert entry.details["verification_cleared"] is True


def test_non_admins_are_offered_only_verified_environments(
    maker_client: Client, admin_client: Client
) -> None:
    _environment("Checked")
    unchecked = _environment("Unchecked", verified=False)
    page = maker_client.get(reverse("gateway:environment_choose")).content.decode()
    assert 'data-environment="Checked"' in page
    assert 'data-environment="Unchecked"' not in page
    # An admin sees it, marked, with no switch button but where to test it.
    page = admin_client.get(reverse("gateway:environment_choose")).content.decode()
    entry = page.split('data-environment="Unchecked"')[1].split("</li>")[0]
    assert "Not verified" in entry
    assert reverse("gateway:environment_switch", args=[unchecked.pk]) not in entry
    # And a hand-made POST is refused by the service, whoever sends it.
    response = maker_client.post(reverse("gateway:environment_switch", args=[unchecked.pk]))
    assert response.status_code == 302
    assert not StaffEnvironmentChoice.objects.exists()


def test_switching_to_production_asks_for_confirmation_first(
    maker: StaffUser, maker_client: Client
) -> None:
    live = _environment("Live", EnvironmentKind.PRODUCTION)
    url = reverse("gateway:environment_switch", args=[live.pk])
    with pytest.raises(ProductionNotConfirmed):
        environment_switch(user=maker, environment=live)

    response = maker_client.post(url, {"next": reverse("console:dashboard")})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="production-warning"' in html
    assert 'name="confirm" value="yes"' in html
    assert not StaffEnvironmentChoice.objects.exists()

    response = maker_client.post(url, {"next": reverse("console:dashboard"), "confirm": "yes"})
    assert response.status_code == 302
    assert StaffEnvironmentChoice.objects.get(user=maker).environment == live
    entry = AuditEntry.objects.get(action="environment.switched")
    assert entry.details["confirmed"] is True


def test_a_sandbox_switch_needs_no_confirmation(maker: StaffUser, maker_client: Client) -> None:
    sandbox = _environment("Play")
    response = maker_client.post(reverse("gateway:environment_switch", args=[sandbox.pk]))
    assert response.status_code == 302
    assert StaffEnvironmentChoice.objects.get(user=maker).environment == sandbox
