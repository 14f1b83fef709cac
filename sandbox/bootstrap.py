"""`payops_bootstrap` step (local and test only): the "Emulator sandbox" environment, ready to use.

It makes the sandbox work out of the box: the environment with its emulator client, the address
the emulator sends OTP codes to (readable in the sandbox mailbox), and its webhook receiver
registered with the emulator through the webhooks services, so events reach the back office.

The client comes from the emulator over HTTP (`POST /_control/clients`), never from its tables
(ADR 0002), so the step works the same against an emulator started on its own. When nothing answers
at EMULATOR_URL yet (`make run` bootstraps before it starts the processes), the same HTTP calls go
to the emulator's ASGI application in this process, which writes to the emulator's own database:
the control calls through `InProcessEmulator`, the gateway's (the registration) through
`gateway.connections.routed`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
from django.apps import apps
from django.conf import settings
from django.db import transaction

from gateway import connections
from gateway.models import Environment, EnvironmentKind
from gateway.services.environments import (
    environment_create,
    environment_update,
    environment_verification_record,
)
from sandbox.control import EmulatorControl, emulator_control
from staff.crypto import SecretDecryptionError
from staff.errors import ServiceError
from webhooks.models import WebhookEndpoint
from webhooks.services import receiver_url, webhook_endpoint_register

SANDBOX_NAME = "Emulator sandbox"
EMULATOR_CLIENT_NAME = "PayOps local back office"
# Where the emulator sends the sandbox's OTP codes; read them in the sandbox mailbox.
DEMO_VERIFICATION_EMAIL = "approvals@payops.local"
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


def _emulator_answers() -> bool:
    try:
        httpx.get(settings.EMULATOR_URL.rstrip("/") + "/healthz", timeout=2).raise_for_status()
        return True
    except httpx.HTTPError:
        if not apps.is_installed("emulator"):
            raise
        return False


@contextlib.contextmanager
def _emulator_reached() -> Iterator[httpx.BaseTransport | None]:
    """
    None (real HTTP) when the emulator answers at EMULATOR_URL. Else the in-process emulator: the
    transport for the control calls, and, for the block's length, the gateway's calls to
    EMULATOR_URL routed to the same application.
    """
    if _emulator_answers():
        yield None
        return
    from emulator.asgi import application

    mounted = httpx.ASGITransport(app=application)  # type: ignore[arg-type]
    with connections.routed(settings.EMULATOR_URL, mounted):
        yield InProcessEmulator()


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


def _verified(environment: Environment) -> None:
    """The credentials were just issued, or just opened a client: staff may switch to it."""
    if not environment.is_verified:
        environment_verification_record(
            environment=environment,
            by=None,
            verified=True,
            reason="credentials issued or checked by the emulator's control API",
        )


def _ensure_environment(
    control: EmulatorControl, transport: httpx.BaseTransport | None, base_url: str
) -> tuple[Environment, str, bool]:
    """The environment, what was done to it, and whether a new emulator client was issued."""
    with transaction.atomic():
        environment = Environment.objects.select_for_update().filter(name=SANDBOX_NAME).first()
        if environment is None:
            issued = _issue(control)
            created = environment_create(
                by=None,
                name=SANDBOX_NAME,
                kind=EnvironmentKind.SANDBOX,
                base_url=base_url,
                client_id=issued["client_id"],
                password=issued["password"],
                api_key=issued["api_key"],
                verification_email=DEMO_VERIFICATION_EMAIL,
            )
            _verified(created)
            return created, f"created at {base_url} with a new emulator client", True
        fields: dict[str, Any] = {}
        if environment.base_url.rstrip("/") != base_url:
            fields["base_url"] = base_url
        if environment.kind != EnvironmentKind.SANDBOX:
            fields["kind"] = EnvironmentKind.SANDBOX
        if not environment.is_active:
            fields["is_active"] = True
        if not environment.verification_email:  # an address an admin chose is kept
            fields["verification_email"] = DEMO_VERIFICATION_EMAIL
        credentials: dict[str, str] = {}
        probe = Environment(kind=EnvironmentKind.SANDBOX, base_url=base_url)
        probe.client_id_encrypted = environment.client_id_encrypted
        probe.password_encrypted = environment.password_encrypted
        probe.api_key_encrypted = environment.api_key_encrypted
        if not _credentials_open_a_client(probe, transport):
            credentials = _issue(control)
        if fields or credentials:
            environment = environment_update(
                environment=environment, by=None, **credentials, **fields
            )
        _verified(environment)
    if not fields and not credentials:
        return environment, f"already set up at {base_url}", False
    changed = sorted(fields) + (["credentials"] if credentials else [])
    return environment, f"updated ({', '.join(changed)})", bool(credentials)


def _ensure_receiver(environment: Environment, *, new_client: bool) -> str:
    """
    Register the environment's receiver with the emulator, once: again only when the URL it
    would register changed, a rotation was left pending, or the emulator issued a new client
    (which has no registration). A re-registration re-sends the same secret: nothing rotates.
    """
    endpoint = WebhookEndpoint.objects.filter(environment=environment).first()
    try:
        if (
            endpoint is not None
            and endpoint.registered_at is not None
            and endpoint.secret_encrypted
            and not endpoint.pending_secret_encrypted
            and endpoint.registered_url == receiver_url(endpoint)
            and not new_client
        ):
            return f"receiver already registered at {endpoint.registered_url}"
        result = webhook_endpoint_register(environment=environment, by=None)
    except ServiceError as exc:
        return (
            f"receiver NOT registered ({exc.message}); once fixed, run "
            "`manage.py webhooks register --environment sandbox`"
        )
    return f"receiver registered at {result.url}"


def ensure_emulator_sandbox() -> str:
    """
    Idempotent: creates the emulator client and the sandbox environment on the first run; later
    runs keep both (the emulator stores secrets hashed, so a client is re-issued only when the
    environment's credentials no longer open one). Sets the OTP address when none is set, and
    registers the webhook receiver when it is not registered yet. Local and test settings only.
    """
    if settings.PAYOPS_ENVIRONMENT not in LOCAL_ENVIRONMENTS:
        return f"{SANDBOX_NAME}: skipped ({settings.PAYOPS_ENVIRONMENT} settings)"
    base_url = settings.EMULATOR_URL.rstrip("/")
    with _emulator_reached() as transport:
        with emulator_control(transport=transport) as control:
            environment, done, new_client = _ensure_environment(control, transport, base_url)
        # Outside the environment's transaction: the gateway refuses to call inside one.
        receiver = _ensure_receiver(environment, new_client=new_client)
    return (
        f"{SANDBOX_NAME}: {done}; OTP codes go to {environment.verification_email} "
        f"(sandbox mailbox); {receiver}"
    )
