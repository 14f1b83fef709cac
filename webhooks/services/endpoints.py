"""Register an environment's receiver upstream and rotate its signing secret without a gap."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from gateway.client import call_sync, upstream
from gateway.errors import UpstreamError
from gateway.models import Environment
from gateway.service_errors import service_error_from_upstream
from staff import crypto
from staff.actions import record_action
from staff.errors import ServiceError
from staff.step_up import step_up_require
from webhooks.models import WebhookEndpoint
from webhooks.permissions import WEBHOOKS_MANAGE
from webhooks.services.catch_up import webhook_catch_up_queue_on_commit

SECRET_PREFIX = "whsec_"


def secret_generate() -> str:
    """256 random bits, URL-safe; the prefix tells people what the string is."""
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def secret_fingerprint(secret: str) -> str:
    """Tells secrets apart in audit entries and pages without revealing them."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()[:12]


def _require_manage(by: Any) -> None:
    # by=None is the operator at the shell (manage.py webhooks): they already hold the keys.
    if by is not None and not by.has_perm(WEBHOOKS_MANAGE):
        raise PermissionDenied(gettext("You may not manage webhooks."))


def receiver_url(endpoint: WebhookEndpoint, *, base_url: str = "") -> str:
    """The absolute URL the upstream posts to: WEBHOOKS_PUBLIC_BASE_URL (or base_url) + path."""
    base = (base_url or settings.WEBHOOKS_PUBLIC_BASE_URL).rstrip("/")
    path = reverse("webhooks:receive", kwargs={"receiver_id": endpoint.receiver_id})
    if not base:
        raise ServiceError(
            gettext("Set WEBHOOKS_PUBLIC_BASE_URL: how the upstream reaches PayOps."),
            code="webhook_base_url_missing",
            errors=[("base_url", gettext("is required"))],
        )
    if not base.startswith(("https://", "http://")):
        raise ServiceError(
            gettext("The public base URL must be an http(s) URL."),
            errors=[("base_url", gettext("not http(s)"))],
        )
    return base + path


def endpoint_url(endpoint: WebhookEndpoint, *, base_url: str = "") -> str:
    """
    The receiver URL to show for an endpoint: joined onto `base_url` when one is given; else the
    URL the upstream was last sent (what it posts to), or, before any registration, the URL
    WEBHOOKS_PUBLIC_BASE_URL would give.
    """
    if base_url or not endpoint.registered_url:
        return receiver_url(endpoint, base_url=base_url)
    return endpoint.registered_url


def webhook_endpoint_get_or_create(*, environment: Environment) -> WebhookEndpoint:
    endpoint, _ = WebhookEndpoint.objects.get_or_create(environment=environment)
    return endpoint


@dataclass(frozen=True)
class RegistrationResult:
    endpoint: WebhookEndpoint
    url: str
    rotated: bool


def _upstream_register(environment: Environment, *, url: str, secret: str) -> None:
    call_sync(
        upstream(environment).webhooks.register,
        webhook_url=url,
        secret=secret,
        client_uuid=environment.client_id,
    )


def _pending_secret_prepare(
    *, environment: Environment, base_url: str, rotate: bool
) -> tuple[WebhookEndpoint, str, bool]:
    """The endpoint, its receiver URL, and whether a new secret is to be sent (kept pending)."""
    with transaction.atomic():
        endpoint = WebhookEndpoint.objects.select_for_update().get(
            pk=webhook_endpoint_get_or_create(environment=environment).pk
        )
        url = receiver_url(endpoint, base_url=base_url)
        new_secret = rotate or not endpoint.secret_encrypted
        if new_secret and not endpoint.pending_secret_encrypted:
            # Committed before the upstream hears of it: the receiver accepts the pending secret
            # from now on, so a delivery signed with it the instant the upstream switches is kept.
            endpoint.pending_secret_encrypted = crypto.encrypt(secret_generate())
            endpoint.pending_since = timezone.now()
            endpoint.save(update_fields=["pending_secret_encrypted", "pending_since"])
    return endpoint, url, new_secret


def _pending_secret_promote(endpoint: WebhookEndpoint, *, now: Any) -> bool:
    """The pending secret becomes current; True when it replaced one (kept as previous)."""
    rotated = False
    if endpoint.secret_encrypted:
        endpoint.previous_secret_encrypted = endpoint.secret_encrypted
        endpoint.previous_secret_set_at = endpoint.secret_set_at
        endpoint.previous_valid_until = now + timedelta(
            seconds=settings.WEBHOOKS_ROTATION_OVERLAP_SECONDS
        )
        rotated = True
    endpoint.secret_encrypted = endpoint.pending_secret_encrypted
    endpoint.secret_set_at = now
    endpoint.pending_secret_encrypted = ""
    endpoint.pending_since = None
    return rotated


def _registration_record(
    *, environment: Environment, endpoint_pk: int, by: Any, url: str, new_secret: bool, rotate: bool
) -> RegistrationResult:
    """What the upstream accepted, stored and audited; a first registration queues a catch-up."""
    now = timezone.now()
    with transaction.atomic():
        endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint_pk)
        rotated = False
        if new_secret and endpoint.pending_secret_encrypted:
            rotated = _pending_secret_promote(endpoint, now=now)
        endpoint.registered_url = url
        endpoint.registered_at = now
        endpoint.last_error = ""
        endpoint.save()
        if not rotate:
            # What the upstream did while no receiver (or another URL) was registered never
            # arrives: the mirrors re-read their open records once this commits.
            webhook_catch_up_queue_on_commit(environment=environment)
        # The receiver's pages are read on demand: nothing listens for an endpoint.
        record_action(
            announce=False,
            actor=by,
            action="webhooks.secret_rotated" if rotated else "webhooks.registered",
            target=endpoint,
            before={
                "fingerprint": secret_fingerprint(endpoint.previous_secret) if rotated else None
            },
            after={"url": url, "fingerprint": secret_fingerprint(endpoint.secret)},
            details={
                "environment": environment.name,
                "url": url,
                "fingerprint": secret_fingerprint(endpoint.secret),
                "previous_valid_until": endpoint.previous_valid_until if rotated else None,
            },
        )
    return RegistrationResult(endpoint=endpoint, url=url, rotated=rotated)


def _register(
    *, environment: Environment, by: Any, base_url: str, rotate: bool
) -> RegistrationResult:
    _require_manage(by)
    if by is not None:
        # Where deliveries go and the secret that proves them: a fresh second factor first
        # (the operator at the shell, by=None, already holds the keys).
        step_up_require(by, action="webhook.secret" if rotate else "webhook.register")
    if not environment.has_credentials:
        raise ServiceError(
            gettext("This environment has no upstream credentials."),
            errors=[("environment", gettext("has no upstream credentials"))],
        )
    endpoint, url, new_secret = _pending_secret_prepare(
        environment=environment, base_url=base_url, rotate=rotate
    )
    signing = endpoint.pending_secret if new_secret else endpoint.secret
    try:
        _upstream_register(environment, url=url, secret=signing)
    except UpstreamError as exc:
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(last_error=str(exc)[:500])
        raise service_error_from_upstream(exc, what="the webhook registration") from exc
    return _registration_record(
        environment=environment,
        endpoint_pk=endpoint.pk,
        by=by,
        url=url,
        new_secret=new_secret,
        rotate=rotate,
    )


def webhook_endpoint_register(
    *, environment: Environment, by: Any, base_url: str = ""
) -> RegistrationResult:
    """
    Register the receiver upstream (a first secret is generated; a later call re-sends it), then,
    in the background, catch up on what the mirrors missed (webhooks.services.catch_up).
    """
    return _register(environment=environment, by=by, base_url=base_url, rotate=False)


def webhook_secret_rotate(
    *, environment: Environment, by: Any, base_url: str = ""
) -> RegistrationResult:
    """A new current secret; the old one stays accepted for WEBHOOKS_ROTATION_OVERLAP_SECONDS.

    If the upstream call fails, the new secret stays pending (and accepted): trying again sends
    the same one, so a registration the upstream took but whose answer was lost is not a gap.
    """
    return _register(environment=environment, by=by, base_url=base_url, rotate=True)


def webhook_secrets_reveal(*, endpoint: WebhookEndpoint, base_url: str = "") -> dict[str, Any]:
    """For the operator command only: the URL and the secrets in full, recorded in the audit.

    No step-up: no staff member calls it (no page or endpoint shows a secret in full); the
    operator at the shell already holds the encryption keys the secrets are stored under.
    """
    with transaction.atomic():
        record_action(
            announce=False,
            actor=None,
            action="webhooks.secrets_revealed",
            target=endpoint,
            details={"environment": endpoint.environment.name, "via": "manage.py webhooks show"},
        )
    return {
        "url": endpoint_url(endpoint, base_url=base_url),
        "secret": endpoint.secret,
        "previous_secret": endpoint.previous_secret if endpoint.previous_accepted() else None,
    }
