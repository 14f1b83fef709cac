"""Webhook fixtures: an environment with a receiver endpoint and known secrets, a signed poster."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from django_q.conf import Conf

from gateway.models import Environment, EnvironmentKind
from staff import crypto
from staff.bootstrap import seed_demo_staff
from staff.models import StaffUser
from staff.roles import roles_sync
from tests.identity import client_signed_in
from webhooks.models import WebhookEndpoint

CURRENT = "whsec_current-secret-for-tests"
PREVIOUS = "whsec_previous-secret-for-tests"


def hmac_hex(body: bytes, secret: str) -> str:
    """The reference signature, computed with the standard library, not the code under test."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def compact(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def new_event(event: str = "user.created", **data: Any) -> dict[str, Any]:
    body = {"event_id": f"evt_{uuid.uuid4()}", **data}
    return {"event": event, "data": body}


@pytest.fixture
def environment(db: None) -> Environment:
    environment = Environment(name="Sandbox", kind=EnvironmentKind.SANDBOX, base_url="http://up")
    environment.set_credentials(client_id=str(uuid.uuid4()), password="pw", api_key="key")
    environment.save()
    return environment


@pytest.fixture
def endpoint(environment: Environment) -> WebhookEndpoint:
    return WebhookEndpoint.objects.create(
        environment=environment,
        secret_encrypted=crypto.encrypt(CURRENT),
        secret_set_at=timezone.now(),
        previous_secret_encrypted=crypto.encrypt(PREVIOUS),
        previous_secret_set_at=timezone.now() - timedelta(days=1),
        previous_valid_until=timezone.now() + timedelta(minutes=10),
    )


@pytest.fixture
def post_signed(client: Client, endpoint: WebhookEndpoint) -> Callable[..., Any]:
    """POST raw bytes to the endpoint's receiver, signed with `secret` unless `signature` given."""

    def post(
        body: bytes | dict[str, Any],
        *,
        secret: str = CURRENT,
        signature: str | None = None,
        sign_over: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        raw = compact(body) if isinstance(body, dict) else body
        extra = dict(headers or {})
        if signature is None:
            signature = hmac_hex(sign_over if sign_over is not None else raw, secret)
        if signature != "":
            extra["x-signature-sha256"] = signature
        return client.post(
            f"/webhooks/in/{endpoint.receiver_id}/",
            data=raw,
            content_type="application/json",
            headers=extra,
        )

    return post


@pytest.fixture
def sync_tasks() -> Iterator[None]:
    """django-q2 runs queued tasks inline, so processing happens when the receiver commits."""
    previous = Conf.SYNC
    Conf.SYNC = True
    try:
        yield
    finally:
        Conf.SYNC = previous


@pytest.fixture
def demo_staff(db: None) -> dict[str, StaffUser]:
    roles_sync()
    return {user.groups.get().name: user for user in seed_demo_staff()}


@pytest.fixture
def client_for(demo_staff: dict[str, StaffUser]) -> Callable[[str], Client]:
    def make(role_key: str) -> Client:
        return client_signed_in(demo_staff[role_key])  # past sign-in's second factor

    return make


# The live emulator of the gateway tests (uvicorn on a free port, over real HTTP).
from tests.gateway.conftest import LiveEmulator, live_emulator, make_environment  # noqa: E402, F401
from tests.servers import serve_in_thread  # noqa: E402


@pytest.fixture
def backoffice(transactional_db: None) -> Iterator[str]:
    """The back office's ASGI app (HTTP + websockets) on a free port: the emulator posts here."""
    from config.asgi import application

    with serve_in_thread(application, lifespan="off") as url:
        yield url


@pytest.fixture
def emulated_sandbox(live_emulator: LiveEmulator) -> Environment:  # noqa: F811
    return make_environment(live_emulator, name="Emulator sandbox")


def create_upstream_user(environment: Environment, email: str) -> Any:
    from gateway.client import call_sync, upstream

    return call_sync(
        upstream(environment).users.create,
        idempotency_key=str(uuid.uuid4()),
        email=email,
        phone_number="+15125550100",
        first_name="Ada",
        last_name="Lovelace",
        country="US",
    )
