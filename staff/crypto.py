"""Encryption of secrets at rest: MultiFernet over PAYOPS_ENCRYPTION_KEYS (newest first).

In staff, the lowest app, so every app can encrypt its secrets (gateway credentials, webhook
secrets, payout codes, authenticator seeds); `gateway_rotate_key` re-encrypts them all.
"""

from __future__ import annotations

from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class SecretDecryptionError(Exception):
    """A stored secret cannot be decrypted with any configured key (a key was removed too early)."""


@cache
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    if not keys:
        raise ImproperlyConfigured(
            "PAYOPS_ENCRYPTION_KEYS is empty: set at least one Fernet key (python -c "
            "'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())')."
        )
    try:
        return MultiFernet([Fernet(key.encode()) for key in keys])
    except ValueError as exc:
        raise ImproperlyConfigured(
            "PAYOPS_ENCRYPTION_KEYS holds a value that is not a Fernet key "
            "(32 url-safe base64-encoded bytes)."
        ) from exc


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.PAYOPS_ENCRYPTION_KEYS))


def encrypt(plaintext: str) -> str:
    return fernet().encrypt(plaintext.encode()).decode()


def decrypt(ciphertext: str) -> str:
    try:
        return fernet().decrypt(ciphertext.encode()).decode()
    except InvalidToken as exc:
        raise SecretDecryptionError(
            "A stored secret could not be decrypted with any configured key."
        ) from exc


def reencrypt(ciphertext: str) -> str:
    """The same secret, encrypted under the newest key (MultiFernet.rotate)."""
    try:
        return fernet().rotate(ciphertext.encode()).decode()
    except InvalidToken as exc:
        raise SecretDecryptionError(
            "A stored secret could not be decrypted with any configured key."
        ) from exc
