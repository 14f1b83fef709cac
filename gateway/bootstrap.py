"""`make run` bootstrap step: an emulator API client and the "Emulator sandbox" environment."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from gateway.crypto import SecretDecryptionError
from gateway.models import Environment, EnvironmentKind
from gateway.services.environments import environment_create, environment_update

SANDBOX_NAME = "Emulator sandbox"
EMULATOR_CLIENT_NAME = "PayOps local back office"
LOCAL_ENVIRONMENTS = ("local", "test")


def _credentials_still_valid(environment: Environment) -> bool:
    """Whether the stored credentials still open an emulator client in this database."""
    from emulator.clients import client_by_api_key, client_check_password

    try:
        client_id, password, api_key = (
            environment.client_id,
            environment.password,
            environment.api_key,
        )
    except SecretDecryptionError:
        return False
    client = client_by_api_key(api_key)
    return (
        client is not None
        and str(client.client_id) == client_id
        and client_check_password(client, password)
    )


def ensure_emulator_sandbox() -> str:
    """
    Idempotent: creates the emulator client and the sandbox environment on the first run; later
    runs keep both (the emulator stores secrets hashed, so a client is re-issued only when the
    environment's credentials no longer open one). Local and test settings only.
    """
    if settings.PAYOPS_ENVIRONMENT not in LOCAL_ENVIRONMENTS:
        return f"{SANDBOX_NAME}: skipped ({settings.PAYOPS_ENVIRONMENT} settings)"
    from emulator.clients import client_create

    base_url = settings.EMULATOR_URL.rstrip("/")
    with transaction.atomic():
        environment = Environment.objects.select_for_update().filter(name=SANDBOX_NAME).first()
        if environment is None:
            issued = client_create(name=EMULATOR_CLIENT_NAME)
            environment_create(
                by=None,
                name=SANDBOX_NAME,
                kind=EnvironmentKind.SANDBOX,
                base_url=base_url,
                client_id=str(issued.client.client_id),
                password=issued.password,
                api_key=issued.api_key,
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
        if not _credentials_still_valid(environment):
            credentials = client_create(name=EMULATOR_CLIENT_NAME).as_dict()
        if not fields and not credentials:
            return f"{SANDBOX_NAME}: already set up at {base_url}"
        environment_update(environment=environment, by=None, **credentials, **fields)
        changed = sorted(fields) + (["credentials"] if credentials else [])
        return f"{SANDBOX_NAME}: updated ({', '.join(changed)})"
