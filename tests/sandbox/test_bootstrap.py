"""The sandbox bootstrap step: its emulator client, OTP address and webhook receiver, once."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from gateway.models import Environment, EnvironmentKind
from sandbox.bootstrap import DEMO_VERIFICATION_EMAIL, SANDBOX_NAME, ensure_emulator_sandbox
from tests.servers import serve_in_thread

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def emulator_url() -> Iterator[str]:
    from emulator.asgi import application

    with serve_in_thread(application, lifespan="off") as url:
        yield url


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def _opens_a_client(environment: Environment, url: str) -> bool:
    import httpx

    response = httpx.post(
        f"{url}/sandbox/auth",
        json={"client_id": environment.client_id, "password": environment.password},
        headers={"x-api-key": environment.api_key},
    )
    return response.status_code == 200


def test_bootstrap_creates_the_sandbox_once_with_a_client_issued_over_http(
    settings: Any, emulator_url: str
) -> None:
    from emulator.models import ApiClient

    settings.EMULATOR_URL = emulator_url
    assert "created" in ensure_emulator_sandbox()
    environment = Environment.objects.get(name=SANDBOX_NAME)
    assert environment.kind == EnvironmentKind.SANDBOX
    assert environment.api_root == f"{emulator_url}/sandbox"
    assert _opens_a_client(environment, emulator_url)
    # Issued by the emulator just now: verified, so every role may switch to it at once.
    assert environment.is_verified

    assert "already set up" in ensure_emulator_sandbox()
    assert ApiClient.objects.count() == 1
    assert Environment.objects.filter(name=SANDBOX_NAME).count() == 1

    # The emulator's database was reset: the next bootstrap issues a client again.
    ApiClient.objects.all().delete()
    third = ensure_emulator_sandbox()
    assert "credentials" in third
    environment.refresh_from_db()
    assert _opens_a_client(environment, emulator_url)


def test_bootstrap_without_a_running_emulator_uses_the_one_in_process(settings: Any) -> None:
    from emulator.models import ApiClient

    settings.EMULATOR_URL = _closed_port_url()
    assert "created" in ensure_emulator_sandbox()
    environment = Environment.objects.get(name=SANDBOX_NAME)
    assert environment.base_url == settings.EMULATOR_URL
    client = ApiClient.objects.get()
    assert str(client.client_id) == environment.client_id
    # A second run checks the credentials through the same in-process emulator and keeps them.
    assert "already set up" in ensure_emulator_sandbox()
    assert ApiClient.objects.count() == 1


def test_bootstrap_does_nothing_outside_local_settings(settings: Any) -> None:
    settings.PAYOPS_ENVIRONMENT = "production"
    assert "skipped" in ensure_emulator_sandbox()
    assert not Environment.objects.exists()


# --- out of the box: the OTP address and the webhook receiver ---------------------------------


def _registrations() -> list[Any]:
    from emulator.models import WebhookRegistration

    return list(WebhookRegistration.objects.select_related("client").order_by("pk"))


def test_bootstrap_registers_the_receiver_once_and_sets_the_otp_address(
    settings: Any, emulator_url: str
) -> None:
    from staff.models import AuditEntry
    from webhooks.models import WebhookEndpoint

    settings.EMULATOR_URL = emulator_url
    first = ensure_emulator_sandbox()

    environment = Environment.objects.get(name=SANDBOX_NAME)
    assert environment.verification_email == DEMO_VERIFICATION_EMAIL
    endpoint = WebhookEndpoint.objects.get(environment=environment)
    expected_url = f"http://127.0.0.1:8000/webhooks/in/{endpoint.receiver_id}/"
    assert endpoint.registered_url == expected_url and "receiver registered" in first
    (registration,) = _registrations()
    assert registration.webhook_url == expected_url
    assert str(registration.client.client_id) == environment.client_id
    assert registration.secret == endpoint.secret

    # Run again: nothing is registered again, nothing rotates, nothing is duplicated.
    again = ensure_emulator_sandbox()
    assert "already set up" in again and "receiver already registered" in again
    endpoint_again = WebhookEndpoint.objects.get()
    assert endpoint_again.secret == endpoint.secret
    assert endpoint_again.registered_at == endpoint.registered_at
    assert not endpoint_again.previous_secret_encrypted
    assert [r.pk for r in _registrations()] == [registration.pk]
    assert AuditEntry.objects.filter(action="webhooks.registered").count() == 1
    assert not AuditEntry.objects.filter(action="webhooks.secret_rotated").exists()


def test_bootstrap_without_a_running_emulator_registers_through_the_one_in_process(
    settings: Any,
) -> None:
    from webhooks.models import WebhookEndpoint

    settings.EMULATOR_URL = _closed_port_url()
    ensure_emulator_sandbox()

    endpoint = WebhookEndpoint.objects.get()
    (registration,) = _registrations()
    assert registration.webhook_url == endpoint.registered_url
    assert registration.secret == endpoint.secret
    # The route to the in-process emulator ends with the step: the gateway is back to the network.
    from gateway import connections

    assert connections._route_for(settings.EMULATOR_URL + "/sandbox/auth") is None


def test_a_new_emulator_client_gets_the_same_receiver_and_secret_again(
    settings: Any, emulator_url: str
) -> None:
    from emulator.models import ApiClient, WebhookRegistration
    from webhooks.models import WebhookEndpoint

    settings.EMULATOR_URL = emulator_url
    ensure_emulator_sandbox()
    secret = WebhookEndpoint.objects.get().secret

    # The emulator's database was reset: a new client, which has no registration yet.
    WebhookRegistration.objects.all().delete()
    ApiClient.objects.all().delete()
    third = ensure_emulator_sandbox()

    assert "credentials" in third and "receiver registered" in third
    (registration,) = _registrations()
    environment = Environment.objects.get()
    assert str(registration.client.client_id) == environment.client_id
    assert registration.secret == secret == WebhookEndpoint.objects.get().secret


def test_an_otp_address_an_admin_chose_is_kept(settings: Any, emulator_url: str) -> None:
    settings.EMULATOR_URL = emulator_url
    ensure_emulator_sandbox()
    Environment.objects.update(verification_email="treasury@example.test")

    assert "already set up" in ensure_emulator_sandbox()
    assert Environment.objects.get().verification_email == "treasury@example.test"


def test_an_older_sandbox_without_an_otp_address_gets_the_demo_one(
    settings: Any, emulator_url: str
) -> None:
    settings.EMULATOR_URL = emulator_url
    ensure_emulator_sandbox()
    Environment.objects.update(verification_email="")

    assert "updated (verification_email)" in ensure_emulator_sandbox()
    assert Environment.objects.get().verification_email == DEMO_VERIFICATION_EMAIL


def test_webhooks_show_answers_after_the_bootstrap_with_the_registered_url(
    settings: Any, emulator_url: str
) -> None:
    import json
    from io import StringIO

    from django.core.management import call_command

    from webhooks.models import WebhookEndpoint

    settings.EMULATOR_URL = emulator_url
    ensure_emulator_sandbox()
    registered = WebhookEndpoint.objects.get().registered_url
    # What the upstream posts to is the URL it was sent, whatever the settings say now.
    settings.WEBHOOKS_PUBLIC_BASE_URL = ""

    out = StringIO()
    call_command("webhooks", "show", "--environment", "sandbox", stdout=out)
    assert out.getvalue().startswith(f"{SANDBOX_NAME}: {registered} (secret set ")

    out = StringIO()
    call_command("webhooks", "show", "--environment", "sandbox", "--json", stdout=out)
    shown = json.loads(out.getvalue())
    assert shown["url"] == registered
    assert shown["secret"] == WebhookEndpoint.objects.get().secret

    # --base-url still overrides.
    out = StringIO()
    call_command(
        "webhooks", "show", "--environment", "sandbox", "--base-url", "https://x.test", stdout=out
    )
    assert "https://x.test/webhooks/in/" in out.getvalue()
