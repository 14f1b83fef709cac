"""Idempotent mutations: `idempotent(...)` stores the first (status, body) per key and replays it.

Usage in an endpoint (returns `(status, body)`; wrap it as `ninja.Status(status, body)`):

    status, body = idempotent(request, client=request.auth, environment=env,
                              scope="payout:" + str(va_id), handler=lambda: _create(...))

- The key comes from the `idempotency-key` header (any case); missing: 400 IDEMPOTENCY_KEY_REQUIRED
  in the resource shape.
- The request fingerprint is sha256 over method, path and the canonical JSON body (keys sorted,
  no spaces); a body that is not JSON is fingerprinted as raw bytes.
- Same key + same fingerprint: the stored status and body are replayed, the handler is not called.
  Same key + other fingerprint: 409 `{"error": {"code": "IDEMPOTENCY_KEY_REUSED", ...}}`.
- The record and the handler's effects commit in one transaction. A concurrent duplicate blocks on
  the unique key (PostgreSQL) or on the write lock (SQLite, IMMEDIATE), then replays or 409s.
- A handler that raises stores nothing (its effects roll back), so the key stays usable.
- Keys are scoped by client, environment and `scope`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.http import HttpRequest

from emulator import clock
from emulator.database import EMULATOR_DB
from emulator.errors import EmulatorError, resource_error
from emulator.models import ApiClient, IdempotencyRecord


def request_fingerprint(request: HttpRequest) -> str:
    raw = request.body
    try:
        canonical = json.dumps(
            json.loads(raw or b"null"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
    except ValueError:
        canonical = raw
    digest = hashlib.sha256()
    digest.update(f"{request.method} {request.path}\n".encode())
    digest.update(canonical)
    return digest.hexdigest()


def _replay(record: IdempotencyRecord, fingerprint: str) -> tuple[int, dict[str, Any]]:
    if record.request_digest != fingerprint:
        raise EmulatorError(
            409,
            {
                "error": {
                    "code": "IDEMPOTENCY_KEY_REUSED",
                    "message": "idempotency-key was already used with a different request body",
                }
            },
        )
    return record.status_code, dict(record.response_body)


def required_key(request: HttpRequest) -> str:
    """The request's idempotency key, stripped; a missing or blank one is a 400."""
    key = (request.headers.get("idempotency-key") or "").strip()
    if not key:
        raise resource_error(
            400,
            "IDEMPOTENCY_KEY_REQUIRED",
            "idempotency-key header is required",
            errors=[("idempotency-key", "required")],
        )
    return key


def idempotent(
    request: HttpRequest,
    *,
    client: ApiClient,
    environment: str,
    scope: str,
    handler: Callable[[], tuple[int, dict[str, Any]]],
) -> tuple[int, dict[str, Any]]:
    """Runs `handler` once per idempotency key; see the module docstring for the rules."""
    key = required_key(request)
    if len(key) > 255:
        raise resource_error(
            400,
            "validation_error",
            "idempotency-key is too long",
            errors=[("idempotency-key", "at most 255 characters")],
        )
    fingerprint = request_fingerprint(request)
    lookup = {"client": client, "environment": environment, "scope": scope, "key": key}
    with transaction.atomic(using=EMULATOR_DB):
        existing = IdempotencyRecord.objects.select_for_update().filter(**lookup).first()
        if existing is not None:
            return _replay(existing, fingerprint)
        try:
            with transaction.atomic(using=EMULATOR_DB):
                record = IdempotencyRecord.objects.create(
                    **lookup, request_digest=fingerprint, created_at=clock.now()
                )
        except IntegrityError:
            # A concurrent request with the same key committed first: READ COMMITTED lets this
            # transaction see its row now.
            winner = IdempotencyRecord.objects.get(**lookup)
            return _replay(winner, fingerprint)
        status, body = handler()
        record.status_code = status
        record.response_body = body
        record.save(update_fields=["status_code", "response_body"])
        return status, body
