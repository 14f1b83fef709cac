"""The sandbox bootstrap step gets its emulator client over HTTP, with or without a server."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from gateway.models import Environment, EnvironmentKind
from sandbox.bootstrap import SANDBOX_NAME, ensure_emulator_sandbox
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
