"""Environment services: create, update, switch, test the connection (all writes audited)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from gateway import errors
from gateway.client import call_sync, upstream
from gateway.crypto import SecretDecryptionError
from gateway.models import Environment, StaffEnvironmentChoice
from gateway.transport import join_url
from staff.services import audit_record

if TYPE_CHECKING:
    from staff.models import StaffUser

# Fields an admin may set on an environment besides its credentials.
SETTABLE_FIELDS = (
    "name",
    "kind",
    "base_url",
    "rate_per_second",
    "max_concurrent",
    "weekly_budget",
    "background_share",
    "is_active",
    "verification_email",
)
CREDENTIAL_FIELDS = ("client_id", "password", "api_key")


def _public_fields(environment: Environment) -> dict[str, Any]:
    """What the audit trail may keep of an environment: never a credential, not even masked."""
    values: dict[str, Any] = {}
    for field in SETTABLE_FIELDS:
        value = getattr(environment, field)
        values[field] = str(value) if isinstance(value, Decimal) else value
    return values


def environment_create(
    *,
    by: StaffUser | None,
    name: str,
    kind: str,
    base_url: str,
    client_id: str,
    password: str,
    api_key: str,
    rate_per_second: int = 10,
    max_concurrent: int = 2,
    weekly_budget: int = 10_000,
    background_share: Decimal = Decimal("0.50"),
    is_active: bool = True,
    verification_email: str = "",
) -> Environment:
    """A new environment with its credentials encrypted at rest."""
    environment = Environment(
        name=name,
        kind=kind,
        base_url=base_url,
        rate_per_second=rate_per_second,
        max_concurrent=max_concurrent,
        weekly_budget=weekly_budget,
        background_share=background_share,
        is_active=is_active,
        verification_email=verification_email,
    )
    environment.set_credentials(client_id=client_id, password=password, api_key=api_key)
    environment.full_clean()
    with transaction.atomic():
        environment.save()
        audit_record(
            actor=by,
            action="environment.created",
            target=environment,
            details=_public_fields(environment),
        )
    return environment


def environment_update(
    *,
    environment: Environment,
    by: StaffUser | None,
    client_id: str | None = None,
    password: str | None = None,
    api_key: str | None = None,
    **fields: Any,
) -> Environment:
    """
    Change an environment. A credential given as None or "" keeps its current value (the form
    says so), so an admin can edit the limits without retyping secrets.
    """
    unknown = set(fields) - set(SETTABLE_FIELDS)
    if unknown:
        raise TypeError(f"environment_update() got unknown fields: {sorted(unknown)}")
    with transaction.atomic():
        environment = Environment.objects.select_for_update().get(pk=environment.pk)
        before = _public_fields(environment)
        for field, value in fields.items():
            setattr(environment, field, value)
        environment.set_credentials(
            client_id=client_id or None, password=password or None, api_key=api_key or None
        )
        environment.full_clean()
        environment.save()
        after = _public_fields(environment)
        changed = {k: {"from": before[k], "to": after[k]} for k in after if before[k] != after[k]}
        audit_record(
            actor=by,
            action="environment.updated",
            target=environment,
            details={
                "changed": changed,
                # Which credentials were replaced, never their values.
                "credentials_replaced": [
                    name
                    for name, value in zip(
                        CREDENTIAL_FIELDS, (client_id, password, api_key), strict=True
                    )
                    if value
                ],
            },
        )
    return environment


class EnvironmentNotActive(Exception):
    """A staff member tried to switch to an inactive environment."""


def environment_switch(*, user: StaffUser, environment: Environment) -> StaffEnvironmentChoice:
    """Make `environment` the one `user` works in (shown as the badge on every page)."""
    if not environment.is_active:
        raise EnvironmentNotActive(f"{environment.name} is not active.")
    with transaction.atomic():
        choice, _ = StaffEnvironmentChoice.objects.update_or_create(
            user=user, defaults={"environment": environment, "chosen_at": timezone.now()}
        )
        audit_record(
            actor=user,
            action="environment.switched",
            target=environment,
            details={"environment": environment.name, "kind": environment.kind},
        )
    return choice


@dataclass(frozen=True)
class ConnectionResult:
    """The outcome of a connection test, in words a person can act on."""

    ok: bool
    message: str


def _duration(seconds: int) -> str:
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def _describe_failure(exc: errors.UpstreamError, url: str) -> str:
    if isinstance(exc, errors.UpstreamTimeout):
        if exc.code == "timeout":
            return (
                f"Unreachable: no answer within {settings.GATEWAY_READ_TIMEOUT:g} seconds "
                f"from {url}"
            )
        # httpx reports a refused connection and an unknown host alike (ConnectError).
        return f"Unreachable: connection refused or unknown host at {url}"
    if isinstance(exc, errors.AuthenticationError):
        return f"Rejected: {exc.message}"
    if isinstance(exc, errors.RateLimited):
        wait = f" (retry after {exc.retry_after:g} seconds)" if exc.retry_after else ""
        return f"Rate limited: the upstream refused more calls for now{wait}"
    if isinstance(exc, errors.BudgetExhausted):
        return f"Not sent: {exc.message}"
    if isinstance(exc, errors.ServerError):
        return f"Upstream error: HTTP {exc.status} at {url}: {exc.message}"
    return f"Rejected: HTTP {exc.status}: {exc.message}" if exc.status else f"Failed: {exc}"


def environment_test_connection(*, environment: Environment) -> ConnectionResult:
    """
    Authenticate with the environment's credentials through the gateway (limiter, retries, call
    log) and say what happened in words. The token is not cached: this proves the credentials,
    it does not replace the token other callers use.
    """
    url = join_url(environment.api_root, "auth")
    if not environment.has_credentials:
        return ConnectionResult(False, "Not tested: this environment has no credentials yet")
    try:
        token = call_sync(upstream(environment).auth.token)
    except SecretDecryptionError:
        return ConnectionResult(
            False, "Not tested: the stored credentials cannot be decrypted with the current keys"
        )
    except errors.UpstreamError as exc:
        return ConnectionResult(False, _describe_failure(exc, url))
    return ConnectionResult(True, f"Connected: token valid for {_duration(token.expires_in)}")
