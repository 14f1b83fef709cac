"""An Environment resolved once per call: where to send, with which key, within which limits."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache

from django.conf import settings

from gateway.limiter.policy import Limits
from gateway.models import Environment
from staff import crypto


@dataclass(frozen=True)
class Target:
    """
    Everything one call needs from its environment, decrypted once and frozen, so that the
    attempts, the limiter, the token cache and the call log all agree on the same values even if
    an admin edits the environment meanwhile. Secrets never appear in its repr.
    """

    environment_id: int
    api_root: str
    api_key: str = field(repr=False)
    client_id: str = field(repr=False)
    password: str = field(repr=False)
    # Ties cached tokens to these credentials: a rotation makes the old token unusable.
    fingerprint: str
    limits: Limits

    @property
    def pool_key(self) -> str:
        return f"{self.environment_id}:{self.api_root}"

    def url(self, path: str) -> str:
        """The one join of the API root and a path (see `gateway.transport.join_url`)."""
        return self.api_root.rstrip("/") + "/" + path.lstrip("/")


@lru_cache(maxsize=64)
def _resolve(
    environment_id: int,
    api_root: str,
    client_id_encrypted: str,
    password_encrypted: str,
    api_key_encrypted: str,
    limits: Limits,
) -> Target:
    def plain(ciphertext: str) -> str:
        return crypto.decrypt(ciphertext) if ciphertext else ""

    client_id, api_key = plain(client_id_encrypted), plain(api_key_encrypted)
    material = f"{api_root}|{client_id}|{api_key}"
    return Target(
        environment_id=environment_id,
        api_root=api_root,
        api_key=api_key,
        client_id=client_id,
        password=plain(password_encrypted),
        fingerprint=hashlib.sha256(material.encode()).hexdigest()[:16],
        limits=limits,
    )


def limits_of(environment: Environment) -> Limits:
    """The environment's configured limits (what the upstream teaches may lower them)."""
    return Limits(
        rate_per_second=int(environment.rate_per_second),
        max_concurrent=int(environment.max_concurrent),
        weekly_budget=int(environment.weekly_budget),
        background_share=float(str(environment.background_share)),
        window_margin=float(settings.GATEWAY_RATE_WINDOW_MARGIN),
    )


def resolve(environment: Environment) -> Target:
    """
    The environment's target. Cached per process by the stored ciphertexts and limits, so the
    credentials are decrypted once per change, not once per attempt; an edit (new ciphertext, new
    limits) resolves afresh.
    """
    return _resolve(
        int(environment.pk),
        environment.api_root,
        environment.client_id_encrypted,
        environment.password_encrypted,
        environment.api_key_encrypted,
        limits_of(environment),
    )
