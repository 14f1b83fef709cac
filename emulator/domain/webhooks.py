"""Webhook registration and delivery: JSON.stringify-exact bodies, HMAC signatures, retries."""

from __future__ import annotations

import hashlib
import hmac
import logging
import random
from datetime import datetime, timedelta
from typing import Any

import httpx
from django.conf import settings
from django.db import transaction
from django.db.models import Q

from emulator import clock, faults
from emulator.database import EMULATOR_DB
from emulator.domain.formats import iso, validation_error
from emulator.models import (
    ApiClient,
    DeliveryAttempt,
    WebhookDelivery,
    WebhookEvent,
    WebhookRegistration,
)
from emulator.models.domain import DeliveryStatus, SecretSlot

logger = logging.getLogger(__name__)
DELIVERY_TIMEOUT = httpx.Timeout(5.0, connect=2.0)
BATCH = 100


def retry_delays() -> list[float]:
    """Delays before retries 1..4 (seconds on the emulator clock)."""
    raw = getattr(settings, "EMULATOR_WEBHOOK_RETRY_DELAYS", "60,300,900,3600")
    items = raw if isinstance(raw, list | tuple) else str(raw).split(",")
    return [float(item) for item in items if str(item).strip()]


def rotation_overlap() -> timedelta:
    return timedelta(
        seconds=float(getattr(settings, "EMULATOR_WEBHOOK_ROTATION_OVERLAP_SECONDS", 60))
    )


def sign(body: bytes, secret: str) -> str:
    return hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def lease() -> timedelta:
    """How long a claimed delivery may stay "sending" before another run may take it over."""
    return timedelta(seconds=float(settings.EMULATOR_WEBHOOK_LEASE_SECONDS))


def fingerprint(secret: str) -> str:
    """Tells secrets apart in the log without revealing them."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()[:12]


def webhook_register(
    *, client: ApiClient, environment: str, body: dict[str, Any]
) -> WebhookRegistration:
    """One registration per client and environment; a new secret starts a rotation window.

    Every queued delivery keeps the secret in force when it was queued for the overlap window
    after the rotation (`secret_until`), then switches to the current secret; deliveries queued
    after the rotation use the new one. Each delivery carries its own secret, so a second
    rotation inside the window does not make the first one's deliveries change secret early.
    """
    url, secret = _checked_registration(client, environment, body)
    now = clock.now()
    with transaction.atomic(using=EMULATOR_DB):
        registration = (
            WebhookRegistration.objects.select_for_update()
            .filter(client=client, environment=environment)
            .first()
        )
        if registration is None:
            return WebhookRegistration.objects.create(
                client=client,
                environment=environment,
                webhook_url=url,
                secret=secret,
                created_at=now,
                updated_at=now,
            )
        if secret != registration.secret:
            registration.previous_secret = registration.secret
            registration.secret = secret
            registration.rotated_at = now
            # Deliveries whose secret was current until now get their window; those already
            # holding an older secret keep their own (shorter) window.
            WebhookDelivery.objects.filter(
                registration=registration,
                status__in=[DeliveryStatus.PENDING, DeliveryStatus.SENDING],
                secret_until__isnull=True,
            ).update(secret_until=now + rotation_overlap())
        registration.webhook_url = url
        registration.updated_at = now
        registration.save()
    return registration


def _checked_registration(
    client: ApiClient, environment: str, body: dict[str, Any]
) -> tuple[str, str]:
    """The registration's URL and secret, or a 400 naming every field at fault."""
    url, secret, client_uuid = body.get("webhook_url"), body.get("secret"), body.get("client_uuid")
    errors: list[tuple[str, str]] = []
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        errors.append(("webhook_url", "must be an http(s) URL"))
    elif environment == "production" and not url.startswith("https://"):
        errors.append(("webhook_url", "must use HTTPS in production"))
    elif len(url) > 500:
        errors.append(("webhook_url", "must be at most 500 characters"))
    if not isinstance(secret, str) or not secret:
        errors.append(("secret", "is required"))
    elif len(secret) > 500:
        errors.append(("secret", "must be at most 500 characters"))
    if not isinstance(client_uuid, str) or not client_uuid:
        errors.append(("client_uuid", "is required"))
    elif client_uuid.lower() != str(client.client_id):
        errors.append(("client_uuid", "does not match the authenticated client"))
    if errors:
        raise validation_error(errors)
    assert isinstance(url, str) and isinstance(secret, str)
    return url, secret


def _claimable(now: datetime) -> Q:
    """Queued, or left "sending" by a process that died before finishing (lease run out)."""
    return Q(status=DeliveryStatus.PENDING) | Q(status=DeliveryStatus.SENDING, lease_until__lt=now)


def _claim(delivery_id: int) -> bool:
    now = clock.now()
    return (
        WebhookDelivery.objects.filter(_claimable(now), pk=delivery_id).update(
            status=DeliveryStatus.SENDING, lease_until=now + lease()
        )
        == 1
    )


def signing_secret(delivery: WebhookDelivery, now: datetime) -> tuple[str, str]:
    """The secret that signs this attempt and its slot (`current` or `previous`)."""
    registration = delivery.registration
    secret = registration.secret
    kept = delivery.signing_secret
    if kept and (delivery.secret_until is None or now <= delivery.secret_until):
        secret = kept
    return secret, SecretSlot.CURRENT if secret == registration.secret else SecretSlot.PREVIOUS


def _send(delivery: WebhookDelivery, http: httpx.Client) -> None:
    registration = delivery.registration
    event: WebhookEvent = delivery.event
    now = clock.now()
    secret, slot = signing_secret(delivery, now)
    attempt = delivery.attempts + 1
    log = DeliveryAttempt(
        delivery=delivery,
        event_id=event.event_id,
        event=event.event,
        url=registration.webhook_url,
        attempt=attempt,
        secret_slot=slot,
        secret_fingerprint=fingerprint(secret),
        at=now,
    )
    status = DeliveryStatus.FAILED
    drop_share = faults.current().drop_webhooks
    if drop_share > 0 and random.random() < drop_share:  # noqa: S311 - a fault share, not crypto
        log.outcome = "dropped"
        status = DeliveryStatus.DROPPED
    else:
        body = event.body.encode("utf-8")
        headers = {
            "content-type": "application/json",
            "x-signature-sha256": sign(body, secret),
            "user-agent": "payops-upstream-emulator",
        }
        try:
            response = http.post(registration.webhook_url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            log.outcome = "error"
            log.error = f"{type(exc).__name__}: {exc}"[:200]
        else:
            log.status_code = response.status_code
            if 200 <= response.status_code < 300:
                log.outcome = "delivered"
                status = DeliveryStatus.DELIVERED
            else:
                log.outcome = "rejected"
    delays = retry_delays()
    with transaction.atomic(using=EMULATOR_DB):
        log.save()
        delivery.attempts = attempt
        if status == DeliveryStatus.FAILED and attempt <= len(delays):
            delivery.status = DeliveryStatus.PENDING
            delivery.next_attempt_at = clock.now() + timedelta(seconds=delays[attempt - 1])
        else:
            delivery.status = status
        delivery.lease_until = None
        delivery.save(update_fields=["attempts", "status", "next_attempt_at", "lease_until"])


def _deliver(ids: list[int]) -> int:
    if not ids:
        return 0
    sent = 0
    with httpx.Client(timeout=DELIVERY_TIMEOUT, follow_redirects=False) as http:
        for delivery_id in ids:
            if not _claim(delivery_id):
                continue
            delivery = WebhookDelivery.objects.select_related("event", "registration").get(
                pk=delivery_id
            )
            try:
                _send(delivery, http)
            except Exception:
                # Never leave a claimed delivery stuck in "sending".
                WebhookDelivery.objects.filter(pk=delivery_id).update(
                    status=DeliveryStatus.PENDING, lease_until=None
                )
                raise
            sent += 1
    return sent


def deliver_due() -> int:
    """One attempt for every delivery whose time has come (the lifespan loop's job)."""
    now = clock.now()
    due = WebhookDelivery.objects.filter(_claimable(now), next_attempt_at__lte=now).order_by(
        "next_attempt_at", "id"
    )
    return _deliver(list(due.values_list("id", flat=True)[:BATCH]))


def flush() -> int:
    """One attempt now for every queued delivery, retries included, whatever their delay."""
    queued = WebhookDelivery.objects.filter(_claimable(clock.now())).order_by(
        "next_attempt_at", "id"
    )
    return _deliver(list(queued.values_list("id", flat=True)))


def deliveries_log(*, event_id: str = "", client_id: str = "") -> list[dict[str, Any]]:
    attempts = DeliveryAttempt.objects.select_related("delivery__registration__client")
    if event_id:
        attempts = attempts.filter(event_id=event_id)
    if client_id:
        attempts = attempts.filter(delivery__registration__client__client_id=client_id)
    return [
        {
            "event_id": item.event_id,
            "event": item.event,
            "url": item.url,
            "attempt": item.attempt,
            "status_code": item.status_code,
            "outcome": item.outcome,
            "error": item.error or None,
            "secret": item.secret_slot,
            "secret_fingerprint": item.secret_fingerprint,
            "at": iso(item.at),
        }
        for item in attempts.order_by("-at", "-id")[:500]
    ]


def delivery_tick() -> None:
    """PERIODIC_JOBS entry."""
    deliver_due()
