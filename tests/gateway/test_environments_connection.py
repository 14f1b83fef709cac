"""Test connection against the REAL emulator over HTTP, through the gateway (limiter, call log)."""

from __future__ import annotations

import logging
import socket

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from gateway import limiter
from gateway.models import Environment, UpstreamCall
from gateway.selectors import quota_gauges
from gateway.services.environments import environment_test_connection, environment_update
from staff.models import AuditEntry, StaffUser
from staff.roles import roles_sync
from tests.gateway.conftest import LiveEmulator
from tests.identity import client_signed_in


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


def test_unreachable_when_nothing_listens_spends_no_call_of_the_budget(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    port = _closed_port()
    environment_update(environment=sandbox, by=None, base_url=f"http://127.0.0.1:{port}")
    environment = Environment.objects.get(pk=sandbox.pk)
    result = environment_test_connection(environment=environment)
    assert not result.ok
    assert result.message == (
        f"Unreachable: connection refused at 127.0.0.1:{port} "
        f"(http://127.0.0.1:{port}/sandbox/auth); nothing was sent, no call counted"
    )
    # The connection never reached the upstream: no call in the log, none in the quota gauge,
    # none in the limiter's weekly count (it used to be four: one per retried attempt).
    assert not UpstreamCall.objects.filter(environment=sandbox).exists()
    (gauge,) = quota_gauges(now=timezone.now(), environments=[environment])
    assert gauge.used == 0
    assert limiter.states([environment.pk])[environment.pk].week_count == 0


def test_a_reachable_upstream_is_tested_with_one_counted_call(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    result = environment_test_connection(environment=sandbox)
    assert result.ok
    assert UpstreamCall.objects.filter(environment=sandbox).count() == 1
    assert limiter.states([sandbox.pk])[sandbox.pk].week_count == 1


def test_a_passed_test_verifies_and_a_refused_one_unverifies(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    Environment.objects.filter(pk=sandbox.pk).update(verified_at=None)
    sandbox.refresh_from_db()
    assert environment_test_connection(environment=sandbox).ok
    sandbox.refresh_from_db()
    assert sandbox.is_verified
    assert AuditEntry.objects.filter(action="environment.verified").count() == 1

    # Replacing a credential clears the verification; a refusal keeps it cleared.
    environment_update(environment=sandbox, by=None, api_key="emk_not-a-real-key-000000")
    sandbox.refresh_from_db()
    assert not sandbox.is_verified
    Environment.objects.filter(pk=sandbox.pk).update(verified_at=timezone.now())
    sandbox.refresh_from_db()
    assert not environment_test_connection(environment=sandbox).ok
    sandbox.refresh_from_db()
    assert not sandbox.is_verified
    assert AuditEntry.objects.filter(action="environment.unverified").count() == 1


def test_htmx_test_connection_swaps_in_the_result(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    roles_sync()
    admin = StaffUser.objects.create_user("admin-conn@example.test", "irrelevant-1")
    admin.groups.add(Group.objects.get(name="admin"))
    client = client_signed_in(admin)
    response = client.post(
        reverse("gateway:environment_test", args=[sandbox.pk]), HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "Connected: token valid for 24 hours" in html
    assert "message-success" in html
    assert "<html" not in html
    # The whole row comes back, now showing the environment as verified.
    assert html.lstrip().startswith(f'<tr id="environment-{sandbox.pk}"')
    assert 'data-testid="verified"' in html
