"""Encryption of secrets at rest: MultiFernet over PAYOPS_ENCRYPTION_KEYS (newest first).

In staff, the lowest app, so every app can encrypt its secrets (gateway credentials, webhook
secrets, payout codes, authenticator seeds, alert webhook URLs, and the secrets of pending admin
changes). Each app declares where it keeps them, from its AppConfig.ready(), with
`register_encrypted_fields`; `gateway_rotate_key` re-encrypts every one it finds there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.utils.crypto import salted_hmac


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


def secrets_version(purpose: str, state: str) -> str:
    """A version of a record that holds secrets, for maker-checker's "changed since proposed":
    keyed (HMAC with SECRET_KEY, so it never stands for a plain hash of a secret) over the
    plaintext `state`, so re-encrypting under a new key leaves it the same."""
    return salted_hmac(f"payops.{purpose}", state, algorithm="sha256").hexdigest()


def reencrypt(ciphertext: str) -> str:
    """The same secret, encrypted under the newest key (MultiFernet.rotate)."""
    try:
        return fernet().rotate(ciphertext.encode()).decode()
    except InvalidToken as exc:
        raise SecretDecryptionError(
            "A stored secret could not be decrypted with any configured key."
        ) from exc


# rotate_row(row, rotate) re-encrypts the secrets a row keeps inside a structure (a JSON payload)
# with `rotate` (ciphertext -> ciphertext), in place, and names the fields it changed.
RowRotator = Callable[[Any, Callable[[str], str]], list[str]]


@dataclass(frozen=True)
class EncryptedFields:
    """Where one model keeps secrets encrypted with this module: whole text columns (one
    ciphertext each, "" for none), and/or secrets inside a structure (`rotate_row`)."""

    model: type[models.Model]
    columns: tuple[str, ...] = ()
    rotate_row: RowRotator | None = None


ENCRYPTED_FIELDS: dict[type[models.Model], EncryptedFields] = {}


def register_encrypted_fields(
    model: type[models.Model], *columns: str, rotate_row: RowRotator | None = None
) -> None:
    """Declare a model's secrets at rest (from the owning app's ready()), so key rotation
    re-encrypts them. Once per model; the same declaration again is harmless."""
    entry = EncryptedFields(model=model, columns=tuple(columns), rotate_row=rotate_row)
    existing = ENCRYPTED_FIELDS.get(model)
    if existing is not None and existing != entry:
        raise ImproperlyConfigured(f"{model._meta.label}'s encrypted fields are declared twice.")
    for name in columns:
        field = model._meta.get_field(name)
        if not isinstance(field, models.TextField | models.CharField):
            raise ImproperlyConfigured(f"{model._meta.label}.{name} is not a text column.")
    ENCRYPTED_FIELDS[model] = entry


def encrypted_fields() -> list[EncryptedFields]:
    """Every declared model with secrets, in a stable order (by label)."""
    return sorted(ENCRYPTED_FIELDS.values(), key=lambda entry: entry.model._meta.label)


def reencrypt_nested(value: Any, rotate: Callable[[str], str]) -> tuple[Any, int]:
    """`value` (a ciphertext, or dicts and lists of them) with every non-empty ciphertext passed
    through `rotate`, and how many were."""
    if isinstance(value, str):
        return (rotate(value), 1) if value else (value, 0)
    if isinstance(value, dict):
        count = 0
        out = {}
        for key, item in value.items():
            out[key], n = reencrypt_nested(item, rotate)
            count += n
        return out, count
    if isinstance(value, list):
        pairs = [reencrypt_nested(item, rotate) for item in value]
        return [item for item, _ in pairs], sum(n for _, n in pairs)
    return value, 0
