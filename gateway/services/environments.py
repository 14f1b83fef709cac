"""Environment services: create, update, switch, test the connection (all writes audited)."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from gateway import errors
from gateway.client import call_sync, upstream
from gateway.models import Environment, StaffEnvironmentChoice
from gateway.transport import join_url
from staff.audit import audit_record
from staff.crypto import SecretDecryptionError
from staff.errors import ServiceError
from staff.step_up import step_up_require

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
# What a connection test proves besides the credentials: changing one needs a new test.
VERIFIED_FIELDS = {"base_url", "kind"}
# Changes that need a fresh second factor (step-up `environment.credentials`): the credentials,
# where they are sent (base_url), and the address the payout release codes go to.
STEP_UP_FIELDS = {"base_url", "verification_email"}
STEP_UP_ACTION = "environment.credentials"


def _step_up_for(by: StaffUser | None) -> None:
    # by=None is the system (the sandbox bootstrap, a command at the shell), not a staff session.
    if by is not None:
        step_up_require(by, action=STEP_UP_ACTION)


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
    """A new environment with its credentials encrypted at rest (step-up: it sets credentials)."""
    _step_up_for(by)
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
            before={},
            after=_public_fields(environment),
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

    Replacing a credential, or changing the base URL or the verification email, needs a fresh
    second factor (refused before anything is saved); the limits and the name need none.
    """
    unknown = set(fields) - set(SETTABLE_FIELDS)
    if unknown:
        raise TypeError(f"environment_update() got unknown fields: {sorted(unknown)}")
    with transaction.atomic():
        environment = Environment.objects.select_for_update().get(pk=environment.pk)
        before = _public_fields(environment)
        sensitive = {k for k in STEP_UP_FIELDS & set(fields) if fields[k] != before[k]}
        if client_id or password or api_key or sensitive:
            _step_up_for(by)
        for field, value in fields.items():
            setattr(environment, field, value)
        environment.set_credentials(
            client_id=client_id or None, password=password or None, api_key=api_key or None
        )
        environment.full_clean()
        after = _public_fields(environment)
        changed = {k: {"from": before[k], "to": after[k]} for k in after if before[k] != after[k]}
        replaced = [
            name
            for name, value in zip(CREDENTIAL_FIELDS, (client_id, password, api_key), strict=True)
            if value
        ]
        # A connection test proved the old URL and credentials, not these: test again first.
        unverified = environment.verified_at is not None and bool(
            replaced or set(changed) & VERIFIED_FIELDS
        )
        if unverified:
            environment.verified_at = None
        environment.save()
        audit_record(
            actor=by,
            action="environment.updated",
            target=environment,
            before=before,
            after=after,
            # Which credentials were replaced, never their values.
            details={
                "changed": changed,
                "credentials_replaced": replaced,
                "verification_cleared": unverified,
            },
        )
    return environment


class EnvironmentSwitchRefused(ServiceError):
    """A staff member may not (yet) work in this environment; the message says why."""

    status = 409
    default_code = "environment_switch_refused"

    def __init__(self, message: str) -> None:
        super().__init__(message, code=self.default_code)


class EnvironmentNotActive(EnvironmentSwitchRefused):
    """A staff member tried to switch to an inactive environment."""

    default_code = "environment_not_active"


class EnvironmentNotVerified(EnvironmentSwitchRefused):
    """The environment's credentials have not passed a connection test."""

    default_code = "environment_not_verified"


class ProductionNotConfirmed(EnvironmentSwitchRefused):
    """Switching to production needs an explicit confirmation (real money moves there)."""

    default_code = "production_not_confirmed"


def environment_switch(
    *, user: StaffUser, environment: Environment, confirmed: bool = False
) -> StaffEnvironmentChoice:
    """
    Make `environment` the one `user` works in (shown as the badge on every page). Only an
    active environment whose credentials passed a connection test; production only `confirmed`.
    """
    if not environment.is_active:
        raise EnvironmentNotActive(gettext("%(name)s is not active.") % {"name": environment.name})
    if not environment.is_verified:
        raise EnvironmentNotVerified(
            gettext(
                "%(name)s has not passed a connection test with its current URL and "
                "credentials: an admin must test it first."
            )
            % {"name": environment.name}
        )
    if environment.is_production and not confirmed:
        raise ProductionNotConfirmed(
            gettext("%(name)s is production: confirm the switch to work with real money.")
            % {"name": environment.name}
        )
    with transaction.atomic():
        choice, _ = StaffEnvironmentChoice.objects.update_or_create(
            user=user, defaults={"environment": environment, "chosen_at": timezone.now()}
        )
        audit_record(
            actor=user,
            action="environment.switched",
            target=environment,
            details={
                "environment": environment.name,
                "kind": environment.kind,
                "confirmed": confirmed,
            },
        )
    return choice


def environment_verification_record(
    *, environment: Environment, by: StaffUser | None, verified: bool, reason: str
) -> Environment:
    """
    Record the outcome of a connection test: verified (authenticated just now), or not (the
    upstream refused the credentials). Audited when the state changes; the dev bootstrap may
    call it for credentials the emulator has just issued.
    """
    with transaction.atomic():
        locked = Environment.objects.select_for_update().get(pk=environment.pk)
        was_verified = locked.is_verified
        locked.verified_at = timezone.now() if verified else None
        locked.save(update_fields=["verified_at", "updated_at"])
        if was_verified != verified:
            audit_record(
                actor=by,
                action="environment.verified" if verified else "environment.unverified",
                target=locked,
                details={"reason": reason},
                before={"verified": was_verified},
                after={"verified": verified},
            )
    environment.verified_at = locked.verified_at
    return environment


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
        return gettext("Unreachable: connection refused or unknown host at %(url)s") % {"url": url}
    if isinstance(exc, errors.AuthenticationError):
        return f"Rejected: {exc.message}"
    if isinstance(exc, errors.RateLimited):
        wait = f" (retry after {exc.retry_after:g} seconds)" if exc.retry_after else ""
        return gettext("Rate limited: the upstream refused more calls for now%(wait)s") % {
            "wait": wait
        }
    if isinstance(exc, errors.BudgetExhausted):
        return gettext("Not sent: %(message)s") % {"message": exc.message}
    if isinstance(exc, errors.ServerError):
        return gettext("Upstream error: HTTP %(status)s at %(url)s: %(message)s") % {
            "status": exc.status,
            "url": url,
            "message": exc.message,
        }
    return f"Rejected: HTTP {exc.status}: {exc.message}" if exc.status else f"Failed: {exc}"


def _unreachable(url: str) -> str:
    """
    Why a TCP connection to `url`'s host cannot be opened, or "" when it can. Checked before the
    test call so that a connection that never reaches the upstream costs no call of the weekly
    budget (and no retries of one): the upstream counts requests, not refused connections.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"the URL's port is not a number ({url})"
    timeout = float(settings.GATEWAY_CONNECT_TIMEOUT)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return ""
    except socket.gaierror:
        return f"unknown host {host}"
    except ConnectionRefusedError:
        return f"connection refused at {host}:{port}"
    except TimeoutError:
        return f"no connection within {timeout:g} seconds to {host}:{port}"
    except OSError as exc:
        return f"cannot connect to {host}:{port} ({exc.strerror or type(exc).__name__})"


def environment_test_connection(
    *, environment: Environment, by: StaffUser | None = None
) -> ConnectionResult:
    """
    Authenticate with the environment's credentials through the gateway (limiter, retries, call
    log) and say what happened in words; a success verifies the environment (it may then be
    switched to), a refusal of the credentials un-verifies it. The token is not cached: this
    proves the credentials, it does not replace the token other callers use.
    """
    url = join_url(environment.api_root, "auth")
    if not environment.has_credentials:
        return ConnectionResult(
            False, gettext("Not tested: this environment has no credentials yet")
        )
    unreachable = _unreachable(url)
    if unreachable:
        return ConnectionResult(
            False,
            gettext("Unreachable: %(unreachable)s (%(url)s); nothing was sent, no call counted")
            % {"unreachable": unreachable, "url": url},
        )
    try:
        token = call_sync(upstream(environment).auth.token)
    except SecretDecryptionError:
        return ConnectionResult(
            False,
            gettext("Not tested: the stored credentials cannot be decrypted with the current keys"),
        )
    except errors.AuthenticationError as exc:
        environment_verification_record(
            environment=environment, by=by, verified=False, reason=exc.message
        )
        return ConnectionResult(False, _describe_failure(exc, url))
    except errors.UpstreamError as exc:
        return ConnectionResult(False, _describe_failure(exc, url))
    environment_verification_record(
        environment=environment, by=by, verified=True, reason="connection test authenticated"
    )
    return ConnectionResult(
        True,
        gettext("Connected: token valid for %(expires_in)s")
        % {"expires_in": _duration(token.expires_in)},
    )
