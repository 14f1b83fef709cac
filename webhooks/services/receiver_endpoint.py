"""The receiver's endpoint and its secrets, cached per process, and how a change is caught.

Loading the endpoint row was a fifth of a delivery's time. Each process keeps the rows it has
read, keyed on the receiver path; a secret is decrypted once per ciphertext.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import connection

from staff import crypto
from webhooks.models import SecretSlot, WebhookEndpoint


def endpoint_secrets(endpoint: WebhookEndpoint) -> list[tuple[str, str]]:
    """The secrets a delivery may be signed with, in the order they are tried."""
    secrets = []
    if endpoint.secret_encrypted:
        secrets.append((SecretSlot.CURRENT.value, _plaintext(endpoint.secret_encrypted)))
    if endpoint.pending_secret_encrypted:
        secrets.append((SecretSlot.PENDING.value, _plaintext(endpoint.pending_secret_encrypted)))
    if endpoint.previous_accepted():
        secrets.append((SecretSlot.PREVIOUS.value, _plaintext(endpoint.previous_secret_encrypted)))
    return secrets


def _plaintext(ciphertext: str) -> str:
    return _decrypt_cached(ciphertext, tuple(settings.PAYOPS_ENCRYPTION_KEYS))


@lru_cache(maxsize=64)
def _decrypt_cached(ciphertext: str, keys: tuple[str, ...]) -> str:
    """
    A secret decrypted once per process instead of on every delivery (a Fernet decrypt is an
    HMAC and an AES pass, ~0.15 ms here).

    Keyed on the ciphertext itself, read in the same query as the rest of the endpoint: a
    rotation in any process writes a new ciphertext (Fernet tokens are never reused), so the
    next request misses and decrypts the new secret; nothing needs invalidating. The keys are
    part of the key so that a changed key list is never answered from the cache. Whether the
    previous secret is still accepted is decided per request, never cached.
    """
    return crypto.decrypt(ciphertext)


# Loading the endpoint row was a fifth of a delivery's time. Each process keeps the rows it has
# read, keyed on the receiver path. What can change on a row (a registration, a rotation, a
# confirmed rotation, the end of an overlap window, a key rotation re-encrypting the secrets, a
# deletion) is caught without an extra round trip:
# - a delivery that does not verify against the cached secrets is checked again against the row
#   read afresh (a secret added anywhere is accepted at once: a new pending or current secret);
# - a delivery that verifies is stored only if the row's secrets are still those it was checked
#   with: the event's own transaction reads them back just before its COMMIT (`endpoint_same`),
#   and on any difference the transaction is rolled back and the delivery judged again on the
#   fresh row (a secret retired anywhere is refused at once).
# Whether the previous secret is still inside its window is decided per request, never cached.

_endpoints: dict[str, WebhookEndpoint] = {}
_ENDPOINT_VERSION_FIELDS = (
    "secret_encrypted",
    "pending_secret_encrypted",
    "previous_secret_encrypted",
    "previous_valid_until",
)


def _endpoint_version(endpoint: WebhookEndpoint) -> tuple[Any, ...]:
    return tuple(getattr(endpoint, field) for field in _ENDPOINT_VERSION_FIELDS)


def endpoint_load(receiver_id: str, *, fresh: bool) -> WebhookEndpoint | None:
    """The receiver's endpoint, from this process's cache unless `fresh` (one SELECT)."""
    if not fresh:
        cached = _endpoints.get(receiver_id)
        if cached is not None:
            return cached
    # Only environment_id is needed from the environment: no join. order_by() drops the model's
    # ordering by environment name, which would otherwise join gateway_environment.
    endpoint = WebhookEndpoint.objects.filter(receiver_id=receiver_id).order_by().first()
    if endpoint is None:
        _endpoints.pop(receiver_id, None)
    else:
        if len(_endpoints) > 256:
            _endpoints.clear()
        _endpoints[receiver_id] = endpoint
    return endpoint


class EndpointChanged(Exception):
    """The endpoint's secrets changed since the delivery was verified: judge it again."""


def endpoint_same(endpoint: WebhookEndpoint) -> None:
    """Inside the storing transaction, just before COMMIT: the row still carries the secrets the
    delivery was verified with (one indexed read on the connection already in use)."""
    with connection.cursor() as cursor:
        cursor.execute(_endpoint_version_sql(connection.vendor), [endpoint.pk])
        row = cursor.fetchone()
    if row is None:
        raise EndpointChanged
    fields = [WebhookEndpoint._meta.get_field(name) for name in _ENDPOINT_VERSION_FIELDS]
    converted = tuple(_from_db(field, value) for field, value in zip(fields, row, strict=True))
    if converted != _endpoint_version(endpoint):
        raise EndpointChanged


@lru_cache(maxsize=4)
def _endpoint_version_sql(vendor: str) -> str:
    quote = connection.ops.quote_name
    meta = WebhookEndpoint._meta
    columns = ", ".join(
        quote(str(WebhookEndpoint._meta.get_field(name).column))  # type: ignore[union-attr]
        for name in _ENDPOINT_VERSION_FIELDS
    )
    table, key = quote(meta.db_table), quote(str(meta.pk.column))
    # Names from the model's metadata, quoted; the only value is a parameter.
    return f"SELECT {columns} FROM {table} WHERE {key} = %s"  # noqa: S608


def _from_db(field: Any, value: Any) -> Any:
    """A column's value as the ORM would have loaded it (SQLite returns datetimes as text)."""
    for converter in connection.ops.get_db_converters(field.get_col(field.model._meta.db_table)):
        value = converter(value, field, connection)
    return value


def endpoint_cache_clear() -> None:
    """Forget this process's endpoints (tests; nothing in the product needs it)."""
    _endpoints.clear()
