"""Test connection against the REAL emulator over HTTP, through the gateway (limiter, call log)."""

from __future__ import annotations

import logging
import socket

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from gateway.models import Environment, UpstreamCall
from gateway.services.environments import environment_test_connection, environment_update
from staff.models import StaffUser
from staff.roles import roles_sync
from tests.gateway.conftest import LiveEmulator


def _closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connected_with_valid_credentials(
    live_emulator: LiveEmulator, sandbox: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    result = environment_test_connection(environment=sandbox)
    assert result.ok
    assert result.message == "Connected: token valid for 24 hours"
    call = UpstreamCall.objects.get(environment=sandbox)
    assert (call.operation, call.status) == ("auth", 200)
    assert sandbox.password not in call.request_body
    assert sandbox.api_key not in call.request_body + call.response_body
    for secret in (sandbox.password, sandbox.api_key, sandbox.client_id):
        assert secret not in caplog.text


def test_rejected_with_a_wrong_api_key(live_emulator: LiveEmulator, sandbox: Environment) -> None:
    environment_update(environment=sandbox, by=None, api_key="emk_not-a-real-key-000000")
    result = environment_test_connection(environment=Environment.objects.get(pk=sandbox.pk))
    assert not result.ok
    assert result.message == "Rejected: invalid API key"
    # Refused once and not retried: a wrong credential cannot become right by trying again.
    calls = UpstreamCall.objects.filter(environment=sandbox)
    assert list(calls.values_list("path", "status")) == [("/auth", 401)]


def test_rejected_with_a_wrong_password(live_emulator: LiveEmulator, sandbox: Environment) -> None:
    environment_update(environment=sandbox, by=None, password="not-the-password")
    result = environment_test_connection(environment=Environment.objects.get(pk=sandbox.pk))
    assert not result.ok
    assert result.message == "Rejected: invalid client ID or password"


def test_unreachable_when_nothing_listens(
    live_emulator: LiveEmulator, sandbox: Environment, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.GATEWAY_MAX_ATTEMPTS = 2
    port = _closed_port()
    environment_update(environment=sandbox, by=None, base_url=f"http://127.0.0.1:{port}")
    result = environment_test_connection(environment=Environment.objects.get(pk=sandbox.pk))
    assert not result.ok
    assert result.message == (
        f"Unreachable: connection refused or unknown host at http://127.0.0.1:{port}/sandbox/auth"
    )
    # Each attempt is logged, with no status (no response).
    assert list(
        UpstreamCall.objects.filter(environment=sandbox).values_list("status", flat=True)
    ) == [None, None]


def test_htmx_test_connection_swaps_in_the_result(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    roles_sync()
    admin = StaffUser.objects.create_user("admin-conn@example.test", "irrelevant-1")
    admin.groups.add(Group.objects.get(name="admin"))
    client = Client()
    client.force_login(admin, backend="django.contrib.auth.backends.ModelBackend")
    response = client.post(
        reverse("gateway:environment_test", args=[sandbox.pk]), HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "Connected: token valid for 24 hours" in html
    assert "message-success" in html
    assert "<html" not in html
