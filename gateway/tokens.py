"""Access tokens: one per environment in the shared cache, refreshed by one process at a time."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from gateway.schemas import AccessToken
from gateway.target import Target
from staff import crypto

Authenticate = Callable[[Target], Awaitable[AccessToken]]

_LOCK_SECONDS = 30


@dataclass(frozen=True)
class CachedToken:
    value: str
    expires_at: float
    refresh_at: float

    def __repr__(self) -> str:
        return f"CachedToken(expires_at={self.expires_at})"


def _key(target: Target) -> str:
    return f"gateway:token:{target.environment_id}:{target.fingerprint}"


def _lock_key(target: Target) -> str:
    return f"gateway:token-lock:{target.environment_id}"


def _decode(stored: object) -> CachedToken | None:
    if not isinstance(stored, dict):
        return None
    try:
        return CachedToken(
            crypto.decrypt(stored["token"]),
            float(stored["expires_at"]),
            float(stored["refresh_at"]),
        )
    except (KeyError, ValueError, crypto.SecretDecryptionError):
        return None


async def current(target: Target) -> str | None:
    """The cached token if it is still fresh, read at the moment of use (a slot just granted)."""
    token = _decode(await cache.aget(_key(target)))
    return token.value if token and token.refresh_at > time.time() else None


async def _write(target: Target, token: AccessToken) -> CachedToken:
    lifetime = float(token.expires_in)
    # A margin larger than a short lifetime would mean "always expired": use at most half of it.
    margin = min(float(settings.GATEWAY_TOKEN_REFRESH_MARGIN), lifetime / 2)
    now = time.time()
    cached = CachedToken(token.access_token, now + lifetime, now + lifetime - margin)
    await cache.aset(
        _key(target),
        # Encrypted at rest: the cache may be a database table or a shared Redis.
        {
            "token": crypto.encrypt(token.access_token),
            "expires_at": cached.expires_at,
            "refresh_at": cached.refresh_at,
        },
        timeout=max(1, int(lifetime)),
    )
    return cached


async def invalidate(target: Target, *, token: str) -> None:
    """Forget the cached token if it is still the one that was refused (another may be newer)."""
    stored = await cache.aget(_key(target))
    if stored is None:
        return
    cached = _decode(stored)
    if cached is None or cached.value == token:
        await cache.adelete(_key(target))


async def get_token(target: Target, authenticate: Authenticate) -> str:
    """
    A valid access token for the target. Single flight across processes: whoever takes the
    cache lock calls /auth; the others wait for the token it stores, and take over only if the
    lock expires without one.
    """
    token = await current(target)
    if token:
        return token
    owner = uuid.uuid4().hex
    deadline = time.monotonic() + _LOCK_SECONDS * 2
    while True:
        if await cache.aadd(_lock_key(target), owner, _LOCK_SECONDS):
            try:
                # Someone may have finished a refresh between our read and the lock.
                token = await current(target)
                if token:
                    return token
                stored = await _write(target, await authenticate(target))
                return stored.value
            finally:
                await cache.adelete(_lock_key(target))
        await asyncio.sleep(0.1)
        token = await current(target)
        if token:
            return token
        if time.monotonic() > deadline:
            raise TimeoutError("waited too long for another process to refresh the token")


async def refresh_if_due(target: Target, authenticate: Authenticate, *, within: float) -> bool:
    """Renew the token early when it expires in less than `within` seconds (or is absent)."""
    stored = await cache.aget(_key(target))
    refresh_at = float(stored.get("refresh_at", 0)) if isinstance(stored, dict) else 0.0
    if refresh_at - within > time.time():
        return False
    await cache.adelete(_key(target))
    await get_token(target, authenticate)
    return True
