"""Step-up on webhook registration and secret rotation: service, pages, API, per role."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from staff.errors import ServiceError
from staff.models import AuditEntry, StaffUser
from staff.step_up import StepUpRequired
from tests.identity import client_signed_in, stepped_up
from webhooks.models import WebhookEndpoint
from webhooks.services import webhook_endpoint_register, webhook_secret_rotate

SERVICES = {"webhook.register": webhook_endpoint_register, "webhook.secret": webhook_secret_rotate}


def _fresh(user: StaffUser) -> StaffUser:
    return StaffUser.objects.get(pk=user.pk)  # no proof attached: no second factor


def _untouched(endpoint: WebhookEndpoint) -> bool:
    after = WebhookEndpoint.objects.get(pk=endpoint.pk)
    return (
        after.secret_encrypted == endpoint.secret_encrypted
        and not after.pending_secret_encrypted
        and not AuditEntry.objects.filter(action__startswith="webhooks.").exists()
    )


@pytest.mark.parametrize("action", SERVICES)
def test_without_a_second_factor_nothing_is_generated_or_sent(
    demo_staff: dict[str, StaffUser], endpoint: WebhookEndpoint, action: str
) -> None:
    with pytest.raises(StepUpRequired) as refused:
        SERVICES[action](environment=endpoint.environment, by=_fresh(demo_staff["admin"]))
    assert (refused.value.status, refused.value.code, refused.value.action) == (
        403,
        "step_up_required",
        action,
    )
    assert _untouched(endpoint)


@pytest.mark.parametrize("action", SERVICES)
def test_with_one_the_next_rule_speaks(
    demo_staff: dict[str, StaffUser], endpoint: WebhookEndpoint, action: str, settings: object
) -> None:
    """Past step-up the service goes on (here to its URL check; the emulator tests in
    test_endpoints_live.py register and rotate for real with a stepped-up admin)."""
    settings.WEBHOOKS_PUBLIC_BASE_URL = "ftp://nowhere"  # type: ignore[attr-defined]
    with pytest.raises(ServiceError) as refused:
        SERVICES[action](
            environment=endpoint.environment, by=stepped_up(_fresh(demo_staff["admin"]))
        )
    assert not isinstance(refused.value, StepUpRequired)
    assert refused.value.errors[0].field == "base_url"


@pytest.mark.parametrize("role", ["finance_maker", "finance_approver", "compliance"])
def test_without_the_permission_it_is_403_not_a_step_up(
    demo_staff: dict[str, StaffUser], endpoint: WebhookEndpoint, role: str
) -> None:
    with pytest.raises(PermissionDenied):
        webhook_secret_rotate(environment=endpoint.environment, by=_fresh(demo_staff[role]))
    client = client_signed_in(demo_staff[role], second_factor=False)
    api = client.post(f"/api/v1/webhooks/endpoints/{endpoint.environment.pk}/rotate")
    assert api.status_code == 403 and api.json()["code"] == "permission_denied"


def _next_of(location: str) -> str:
    parts = urlsplit(location)
    assert parts.path == reverse("staff:step_up")
    return parse_qs(parts.query)["next"][0]


def test_pages_without_freshness_redirect_to_step_up(
    demo_staff: dict[str, StaffUser], endpoint: WebhookEndpoint
) -> None:
    client = client_signed_in(demo_staff["admin"], second_factor=False)
    rotate = reverse("webhooks:rotate", args=[endpoint.environment.pk])
    assert 'data-testid="step-up-notice"' in client.get(rotate).content.decode()
    response = client.post(rotate, {"confirm": "yes"}, HTTP_REFERER=f"http://testserver{rotate}")
    assert response.status_code == 302 and _next_of(response["Location"]) == rotate
    endpoints = reverse("webhooks:endpoints")
    response = client.post(
        reverse("webhooks:register", args=[endpoint.environment.pk]),
        HTTP_REFERER=f"http://testserver{endpoints}",
    )
    assert _next_of(response["Location"]) == endpoints
    assert _untouched(endpoint)


def test_a_fresh_session_sees_no_notice(
    demo_staff: dict[str, StaffUser], endpoint: WebhookEndpoint
) -> None:
    client = client_signed_in(demo_staff["admin"])
    for url in (
        reverse("webhooks:endpoints"),
        reverse("webhooks:rotate", args=[endpoint.environment.pk]),
    ):
        assert 'data-testid="step-up-notice"' not in client.get(url).content.decode()


@pytest.mark.parametrize("verb", ["register", "rotate"])
def test_the_api_answers_403_step_up_required(
    demo_staff: dict[str, StaffUser], endpoint: WebhookEndpoint, verb: str
) -> None:
    client = client_signed_in(demo_staff["admin"], second_factor=False)
    response = client.post(f"/api/v1/webhooks/endpoints/{endpoint.environment.pk}/{verb}")
    assert response.status_code == 403
    assert response.json()["code"] == "step_up_required"
    assert "Location" not in response
    assert _untouched(endpoint)
