"""`payops_bootstrap` step (local and test only): the "Emulator sandbox" environment and its client.

The client comes from the emulator over HTTP (`POST /_control/clients`), never from its tables
(ADR 0002), so the step works the same against an emulator started on its own. When nothing answers
at EMULATOR_URL yet (`make run` bootstraps before it starts the processes), the same HTTP calls go
to the emulator's ASGI application in this process, which writes to the emulator's own database.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from django.apps import apps
from django.conf import settings
from django.db import transaction

from gateway.crypto import SecretDecryptionError
from gateway.models import Environment, EnvironmentKind
from gateway.services.environments import environment_create, environment_update
from sandbox.control import EmulatorControl, emulator_control

SANDBOX_NAME = "Emulator sandbox"
EMULATOR_CLIENT_NAME = "PayOps local back office"
LOCAL_ENVIRONMENTS = ("local", "test")


class InProcessEmulator(httpx.BaseTransport):
    """Sync HTTP to the emulator's ASGI application mounted in this process (no server needed)."""

    def __init__(self) -> None:
        from emulator.asgi import application

        self._transport = httpx.ASGITransport(app=application)  # type: ignore[arg-type]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        async def send() -> httpx.Response:
            response = await self._transport.handle_async_request(request)
            content = await response.aread()
            return httpx.Response(response.status_code, headers=response.headers, content=content)

        return asyncio.run(send())


def _transport() -> httpx.BaseTransport | None:
    """None (real HTTP) when the emulator answers at EMULATOR_URL, else the in-process one."""
    try:
        httpx.get(settings.EMULATOR_URL.rstrip("/") + "/healthz", timeout=2).raise_for_status()
        return None
    except httpx.HTTPError:
        if not apps.is_installed("emulator"):
            raise
        return InProcessEmulator()


def _credentials_open_a_client(
    environment: Environment, transport: httpx.BaseTransport | None
) -> bool:
    """Whether the stored credentials still obtain a token from the emulator (one /auth call)."""
    try:
        client_id, password, api_key = (
            environment.client_id,
            environment.password,
            environment.api_key,
        )
    except SecretDecryptionError:
        return False
    with httpx.Client(transport=transport, timeout=10) as client:
        response = client.post(
            environment.api_root + "/auth",
            json={"client_id": client_id, "password": password},
            headers={"x-api-key": api_key},
        )
    return response.status_code == 200


def _issue(control: EmulatorControl) -> dict[str, str]:
    issued = control.create_client(EMULATOR_CLIENT_NAME)
    return {"client_id": issued.client_id, "password": issued.password, "api_key": issued.api_key}


def ensure_emulator_sandbox() -> str:
    """
    Idempotent: creates the emulator client and the sandbox environment on the first run; later
    runs keep both (the emulator stores secrets hashed, so a client is re-issued only when the
    environment's credentials no longer open one). Local and test settings only.
    """
    if settings.PAYOPS_ENVIRONMENT not in LOCAL_ENVIRONMENTS:
        return f"{SANDBOX_NAME}: skipped ({settings.PAYOPS_ENVIRONMENT} settings)"
    base_url = settings.EMULATOR_URL.rstrip("/")
    transport = _transport()
    with emulator_control(transport=transport) as control, transaction.atomic():
        environment = Environment.objects.select_for_update().filter(name=SANDBOX_NAME).first()
        if environment is None:
            issued = _issue(control)
            environment_create(
                by=None,
                name=SANDBOX_NAME,
                kind=EnvironmentKind.SANDBOX,
                base_url=base_url,
                client_id=issued["client_id"],
                password=issued["password"],
                api_key=issued["api_key"],
            )
            return f"{SANDBOX_NAME}: created at {base_url} with a new emulator client"
        fields: dict[str, Any] = {}
        if environment.base_url.rstrip("/") != base_url:
            fields["base_url"] = base_url
        if environment.kind != EnvironmentKind.SANDBOX:
            fields["kind"] = EnvironmentKind.SANDBOX
        if not environment.is_active:
            fields["is_active"] = True
        credentials: dict[str, str] = {}
        probe = Environment(kind=EnvironmentKind.SANDBOX, base_url=base_url)
        probe.client_id_encrypted = environment.client_id_encrypted
        probe.password_encrypted = environment.password_encrypted
        probe.api_key_encrypted = environment.api_key_encrypted
        if not _credentials_open_a_client(probe, transport):
            credentials = _issue(control)
        if not fields and not credentials:
            return f"{SANDBOX_NAME}: already set up at {base_url}"
        environment_update(environment=environment, by=None, **credentials, **fields)
        changed = sorted(fields) + (["credentials"] if credentials else [])
        return f"{SANDBOX_NAME}: updated ({', '.join(changed)})"
