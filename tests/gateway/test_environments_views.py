"""Environment pages, switching, the badge, the dashboard gauge and the call log page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from gateway.models import Environment, EnvironmentKind, UpstreamCall
from gateway.services.environments import environment_create, environment_verification_record
from staff.models import AuditEntry, StaffUser
from staff.roles import roles_sync
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db

BACKEND = "django.contrib.auth.backends.ModelBackend"
SECRET_API_KEY = "sk_test_visible_never_0123456789"
SECRET_PASSWORD = "pw-never-shown-4567"


def _user(email: str, role: str | None) -> StaffUser:
    roles_sync()
    user = StaffUser.objects.create_user(email, "irrelevant-password-1")
    if role:
        user.groups.add(Group.objects.get(name=role))
    return user


@pytest.fixture
def admin_client() -> Client:
    # Past sign-in's second factor: credentials and URLs need a fresh one (step-up).
    return client_signed_in(_user("admin-g2@example.test", "admin"))


@pytest.fixture
def maker() -> StaffUser:
    return _user("maker-g2@example.test", "finance_maker")


@pytest.fixture
def maker_client(maker: StaffUser) -> Client:
    return client_signed_in(maker)


def _environment(
    name: str = "Sandbox A", kind: str = EnvironmentKind.SANDBOX, *, verified: bool = True
) -> Environment:
    """An environment; verified (as after a passed connection test) unless told otherwise."""
    environment = environment_create(
        by=None,
        name=name,
        kind=kind,
        base_url="https://api.example.test",
        client_id="3b0c0c1e-8b5d-4c53-9d7e-0d7b9c7f1a22",
        password=SECRET_PASSWORD,
        api_key=SECRET_API_KEY,
    )
    if verified:
        environment_verification_record(
            environment=environment, by=None, verified=True, reason="test fixture"
        )
    return environment


def _form_data(**overrides: object) -> dict[str, object]:
    data: dict[str, object] = {
        "name": "New sandbox",
        "kind": "sandbox",
        "base_url": "https://sandbox.example.test",
        "client_id": "cid-1234-5678",
        "password": "form-password-9999",
        "api_key": "form-api-key-abcdef",
        "rate_per_second": "10",
        "max_concurrent": "2",
        "weekly_budget": "10000",
        "background_share": "0.5",
        "is_active": "on",
    }
    data.update(overrides)
    return data


def test_non_admin_gets_403_on_every_admin_page(maker_client: Client) -> None:
    env = _environment()
    pages = [
        ("get", reverse("gateway:environments")),
        ("get", reverse("gateway:environment_add")),
        ("post", reverse("gateway:environment_add")),
        ("get", reverse("gateway:environment_edit", args=[env.pk])),
        ("post", reverse("gateway:environment_test", args=[env.pk])),
        ("get", reverse("gateway:quota")),
        ("get", reverse("gateway:call_log")),
    ]
    for method, url in pages:
        response = getattr(maker_client, method)(url)
        assert response.status_code == 403, url
    assert not Environment.objects.exclude(pk=env.pk).exists()


def test_anonymous_is_sent_to_login() -> None:
    response = Client().get(reverse("gateway:environments"))
    assert response.status_code == 302
    assert reverse("staff:login") in response["Location"]


def test_list_shows_masked_credentials_only(admin_client: Client) -> None:
    _environment()
    response = admin_client.get(reverse("gateway:environments"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Sandbox A" in html
    assert SECRET_API_KEY[-4:] in html
    assert SECRET_API_KEY not in html
    assert SECRET_PASSWORD not in html


def test_admin_adds_an_environment_with_encrypted_credentials(admin_client: Client) -> None:
    response = admin_client.post(reverse("gateway:environment_add"), _form_data())
    assert response.status_code == 302
    env = Environment.objects.get(name="New sandbox")
    assert env.api_key == "form-api-key-abcdef"
    assert "form-api-key-abcdef" not in env.api_key_encrypted
    assert AuditEntry.objects.filter(action="environment.created", target_id=str(env.pk)).exists()


def test_add_requires_credentials(admin_client: Client) -> None:
    response = admin_client.post(
        reverse("gateway:environment_add"), _form_data(api_key="", password="")
    )
    assert response.status_code == 200
    assert response.context["form"].errors.keys() >= {"api_key", "password"}
    assert not Environment.objects.exists()


def test_edit_form_says_blank_keeps_and_never_renders_secrets(admin_client: Client) -> None:
    env = _environment()
    url = reverse("gateway:environment_edit", args=[env.pk])
    html = admin_client.get(url).content.decode()
    assert "Leave blank to keep the current value" in html
    assert SECRET_API_KEY not in html and SECRET_PASSWORD not in html

    response = admin_client.post(
        url, _form_data(name="Sandbox A", client_id="", password="", api_key="", weekly_budget=42)
    )
    assert response.status_code == 302
    env.refresh_from_db()
    assert env.weekly_budget == 42
    assert env.api_key == SECRET_API_KEY
    assert env.password == SECRET_PASSWORD


def test_switch_changes_the_badge_on_every_page(admin_client: Client) -> None:
    sandbox = _environment("Sandbox A")
    production = _environment("Live", EnvironmentKind.PRODUCTION)
    page = admin_client.get(reverse("gateway:environments")).content.decode()
    assert 'data-testid="env-badge"' in page
    assert "env-sandbox" in page and "Sandbox A" in page

    response = admin_client.post(
        reverse("gateway:environment_switch", args=[production.pk]),
        {"next": reverse("console:dashboard"), "confirm": "yes"},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("console:dashboard")
    page = admin_client.get(reverse("console:dashboard")).content.decode()
    assert "env-production" in page and "PRODUCTION" in page
    assert 'class="is-production"' in page
    assert sandbox.name not in page.split('data-testid="env-badge"')[1].split("</span>")[0]


def test_any_staff_member_may_switch_but_not_to_an_inactive_one(
    maker_client: Client, maker: StaffUser
) -> None:
    active = _environment("Active")
    inactive = _environment("Old")
    Environment.objects.filter(pk=inactive.pk).update(is_active=False)
    page = maker_client.get(reverse("gateway:environment_choose")).content.decode()
    assert "Active" in page and "Old" not in page
    maker_client.post(reverse("gateway:environment_switch", args=[active.pk]))
    assert maker.environment_choice.environment == active
    maker_client.post(reverse("gateway:environment_switch", args=[inactive.pk]))
    maker.environment_choice.refresh_from_db()
    assert maker.environment_choice.environment == active


def test_switch_refuses_an_offsite_next(maker_client: Client) -> None:
    env = _environment()
    response = maker_client.post(
        reverse("gateway:environment_switch", args=[env.pk]), {"next": "https://evil.test/"}
    )
    assert response["Location"] == reverse("gateway:environment_choose")


def test_dashboard_shows_the_quota_gauge_to_admins_only(
    admin_client: Client, maker_client: Client
) -> None:
    env = _environment()
    UpstreamCall.objects.create(
        environment=env, operation="auth", method="POST", path="/auth", status=200
    )
    html = admin_client.get(reverse("console:dashboard")).content.decode()
    assert "Upstream budget this ISO week" in html
    assert '<strong class="quota-used">1</strong> of 10,000' in html
    assert "<svg" in html
    assert "Upstream budget" not in maker_client.get(reverse("console:dashboard")).content.decode()


def test_call_log_filters_and_paginates(admin_client: Client) -> None:
    first = _environment("First")
    second = _environment("Second")
    today = timezone.now()
    yesterday = today - timedelta(days=1)
    rows = [
        UpstreamCall(
            environment=first,
            method="GET",
            path=f"/v1/quotations/{i}",
            status=200,
            created_at=today,
        )
        for i in range(55)
    ]
    rows += [
        UpstreamCall(environment=first, method="POST", path="/auth", status=401, created_at=today),
        UpstreamCall(
            environment=second,
            method="POST",
            path="/v1/payouts",
            status=None,
            created_at=yesterday,
            error_code="timeout",
        ),
        UpstreamCall(
            environment=second,
            method="GET",
            path="/v1/users/1",
            status=503,
            created_at=yesterday,
            response_body='{"message": "[redacted]"}',
        ),
    ]
    UpstreamCall.objects.bulk_create(rows)
    url = reverse("gateway:call_log")

    page = admin_client.get(url)
    assert page.context["page"].paginator.count == 58
    assert len(page.context["page"].object_list) == 50
    page2 = admin_client.get(url, {"page": 2})
    assert len(page2.context["page"].object_list) == 8

    def count(**params: object) -> int:
        return admin_client.get(url, params).context["page"].paginator.count

    assert count(environment=second.pk) == 2
    assert count(status_class="4xx") == 1
    assert count(status_class="5xx") == 1
    assert count(status_class="none") == 1
    assert count(status_class="2xx", environment=first.pk) == 55
    assert count(path="auth") == 1
    assert count(date=yesterday.astimezone(UTC).date().isoformat()) == 2
    filtered = admin_client.get(url, {"environment": second.pk, "status_class": "5xx"})
    assert "{&quot;message&quot;: &quot;[redacted]&quot;}" in filtered.content.decode()


def test_call_log_htmx_request_renders_only_the_results(admin_client: Client) -> None:
    response = admin_client.get(reverse("gateway:call_log"), HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="call-log-results">')
    assert "<html" not in html


def test_admin_site_lists_environments_masked() -> None:
    env = _environment()
    admin_client = client_signed_in(
        StaffUser.objects.create_superuser("root-g2@example.test", "irrelevant-1")
    )
    listing = admin_client.get(reverse("admin:gateway_environment_changelist")).content.decode()
    detail = admin_client.get(
        reverse("admin:gateway_environment_change", args=[env.pk])
    ).content.decode()
    for html in (listing, detail):
        assert SECRET_API_KEY[-4:] in html
        assert SECRET_API_KEY not in html
        assert SECRET_PASSWORD not in html
        assert env.api_key_encrypted not in html


def test_naive_now_is_not_used() -> None:
    # Guard for the selectors' ISO week maths: timezone.now() is aware in these settings.
    assert timezone.now().tzinfo is not None
    assert datetime.now(UTC).tzinfo is UTC


def test_quota_page_and_its_htmx_fragment(admin_client: Client) -> None:
    env = _environment("Gauge env")
    UpstreamCall.objects.create(
        environment=env,
        operation="quotation_create",
        method="POST",
        path="/v1/quotations",
        status=201,
        priority="background",
    )
    full = admin_client.get(reverse("gateway:quota")).content.decode()
    assert "<html" in full and "Gauge env" in full and "quotation_create" in full
    assert "Background: 1 (capped at 5,000)" in full
    fragment = admin_client.get(reverse("gateway:quota"), HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<div id="quota-gauges-list"')


def test_every_page_links_the_badge_to_the_environment_choice(maker_client: Client) -> None:
    _environment()
    page = maker_client.get(reverse("console:dashboard")).content.decode()
    assert 'data-testid="env-switch"' in page
    assert reverse("gateway:environment_choose") in page


def test_form_refuses_a_background_share_above_one(admin_client: Client) -> None:
    response = admin_client.post(
        reverse("gateway:environment_add"), _form_data(background_share="1.5")
    )
    assert response.status_code == 200
    assert "background_share" in response.context["form"].errors
    assert not Environment.objects.exists()


def test_list_shows_the_limits_the_upstream_taught(admin_client: Client) -> None:
    import time

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from gateway.limiter.backends import store
    from gateway.limiter.policy import Answer, observe

    environment = _environment()  # configured 10/s, 2 at once

    def taught(state: Any) -> None:
        now = time.time()
        answer = Answer.from_headers(200, {"ratelimit-limit": "5", "ratelimit-reset": "1"})
        observe(state, answer, now=now, in_flight=1, learn_for=600)
        refusal = Answer.from_headers(429, {"ratelimit-remaining": "3", "ratelimit-reset": "1"})
        observe(state, refusal, now=now, in_flight=2, learn_for=600)

    store().update(environment.pk, taught)
    with CaptureQueriesContext(connection) as one:
        response = admin_client.get(reverse("gateway:environments"))
    html = " ".join(response.content.decode().split())
    assert "Upstream says: 5/s, 1 at once" in html
    assert "Kept: 5/s, 1 at once" in html
    for name in ("Sandbox B", "Sandbox C"):
        _environment(name)
    with CaptureQueriesContext(connection) as three:
        admin_client.get(reverse("gateway:environments"))
    assert len(three) == len(one)  # one read of the limiter's states, whatever the count


def test_the_call_log_says_our_own_failures_in_words_and_keeps_the_upstreams_codes(
    admin_client: Client,
) -> None:
    env = _environment()
    UpstreamCall.objects.create(
        environment=env, method="POST", path="/v1/payouts", error_code="connection_error"
    )
    UpstreamCall.objects.create(
        environment=env, method="POST", path="/v1/payouts", status=400, error_code="otp_invalid"
    )
    html = admin_client.get(reverse("gateway:call_log"), HTTP_ACCEPT_LANGUAGE="es").content
    page = html.decode()
    assert "la conexión falló" in page
    assert "connection_error" not in page
    assert "<code>otp_invalid</code>" in page  # the upstream's own code, as it sent it
