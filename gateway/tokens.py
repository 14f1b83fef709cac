"""Access tokens: one per environment in the shared cache, refreshed by one process at a time."""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import cache

from gateway import crypto
from gateway.models import Environment
from gateway.schemas import AccessToken

Authenticate = Callable[[Environment], Awaitable[AccessToken]]

_LOCK_SECONDS = 30


@dataclass(frozen=True)
class CachedToken:
    value: str
    expires_at: float
    refresh_at: float

    def __repr__(self) -> str:
        return f"CachedToken(expires_at={self.expires_at})"


def _fingerprint(environment: Environment) -> str:
    """Ties a cached token to the credentials it came from: a rotation makes it unusable."""
    material = f"{environment.api_root}|{environment.client_id}|{environment.api_key}"
    return hashlib.sha256(material.encode()).hexdigest()[:16]


def _key(environment: Environment) -> str:
    return f"gateway:token:{environment.pk}:{_fingerprint(environment)}"


def _lock_key(environment: Environment) -> str:
    return f"gateway:token-lock:{environment.pk}"


def _read(environment: Environment) -> CachedToken | None:
    stored = cache.get(_key(environment))
    if not isinstance(stored, dict):
        return None
    try:
        token = CachedToken(
            crypto.decrypt(stored["token"]),
            float(stored["expires_at"]),
            float(stored["refresh_at"]),
        )
    except (KeyError, ValueError, crypto.SecretDecryptionError):
        return None
    return token if token.refresh_at > time.time() else None


def _write(environment: Environment, token: AccessToken) -> CachedToken:
    lifetime = float(token.expires_in)
    # A margin larger than a short lifetime would mean "always expired": use at most half of it.
    margin = min(float(settings.GATEWAY_TOKEN_REFRESH_MARGIN), lifetime / 2)
    now = time.time()
    cached = CachedToken(token.access_token, now + lifetime, now + lifetime - margin)
    cache.set(
        _key(environment),
        # Encrypted at rest: the cache may be a database table or a shared Redis.
        {
            "token": crypto.encrypt(token.access_token),
            "expires_at": cached.expires_at,
            "refresh_at": cached.refresh_at,
        },
        timeout=max(1, int(lifetime)),
    )
    return cached


def invalidate(environment: Environment, *, token: str) -> None:
    """Forget the cached token if it is still the one that was refused (another may be newer)."""
    stored = cache.get(_key(environment))
    if isinstance(stored, dict):
        try:
            current = crypto.decrypt(stored["token"])
        except (KeyError, crypto.SecretDecryptionError):
            current = None
        if current is None or current == token:
            cache.delete(_key(environment))


async def get_token(environment: Environment, authenticate: Authenticate) -> str:
    """
    A valid access token for the environment. Single flight across processes: whoever takes the
    cache lock calls /auth; the others wait for the token it stores, and take over only if the
    lock expires without one.
    """
    cached = await sync_to_async(_read)(environment)
    if cached:
        return cached.value
    owner = uuid.uuid4().hex
    deadline = time.monotonic() + _LOCK_SECONDS * 2
    while True:
        took = await sync_to_async(cache.add)(_lock_key(environment), owner, _LOCK_SECONDS)
        if took:
            try:
                # Someone may have finished a refresh between our read and the lock.
                cached = await sync_to_async(_read)(environment)
                if cached:
                    return cached.value
                token = await authenticate(environment)
                stored = await sync_to_async(_write)(environment, token)
                return stored.value
            finally:
                await sync_to_async(cache.delete)(_lock_key(environment))
        await asyncio.sleep(0.1)
        cached = await sync_to_async(_read)(environment)
        if cached:
            return cached.value
        if time.monotonic() > deadline:
            raise TimeoutError("waited too long for another process to refresh the token")


async def refresh_if_due(
    environment: Environment, authenticate: Authenticate, *, within: float
) -> bool:
    """Renew the token early when it expires in less than `within` seconds (or is absent)."""
    stored = await sync_to_async(cache.get)(_key(environment))
    refresh_at = float(stored.get("refresh_at", 0)) if isinstance(stored, dict) else 0.0
    if refresh_at - within > time.time():
        return False
    await sync_to_async(cache.delete)(_key(environment))
    await get_token(environment, authenticate)
    return True
