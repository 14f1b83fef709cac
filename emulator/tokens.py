"""HS256 JWTs of the emulator, hand-rolled with hmac/base64 (claims: client_id, env, iat, exp)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import datetime
from typing import Any

from django.conf import settings


class InvalidToken(Exception):
    """The token is malformed or its signature does not match."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _key() -> bytes:
    secret = settings.EMULATOR_JWT_SECRET or ("emulator-jwt:" + settings.SECRET_KEY)
    return hashlib.sha256(secret.encode()).digest()


def encode(claims: dict[str, Any]) -> str:
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{header}.{payload}".encode()
    signature = _b64(hmac.new(_key(), signing_input, hashlib.sha256).digest())
    return f"{header}.{payload}.{signature}"


def decode(token: str) -> dict[str, Any]:
    """Checks the signature and returns the claims; expiry is the caller's job (emulator clock)."""
    try:
        header_b64, payload_b64, signature_b64 = token.split(".")
        header = json.loads(_unb64(header_b64))
        expected = hmac.new(_key(), f"{header_b64}.{payload_b64}".encode(), hashlib.sha256)
        if header.get("alg") != "HS256" or not hmac.compare_digest(
            _unb64(signature_b64), expected.digest()
        ):
            raise InvalidToken("bad signature")
        claims = json.loads(_unb64(payload_b64))
    except (ValueError, TypeError) as exc:
        raise InvalidToken(str(exc)) from exc
    if not isinstance(claims, dict):
        raise InvalidToken("claims are not an object")
    return claims


def issue(*, client_id: str, environment: str, at: datetime) -> tuple[str, int]:
    # The live sandbox answers 86400; the documents (and so production) say 3600.
    if environment == "production":
        ttl = int(settings.EMULATOR_PRODUCTION_TOKEN_TTL_SECONDS)
    else:
        ttl = int(settings.EMULATOR_TOKEN_TTL_SECONDS)
    iat = int(at.timestamp())
    claims = {"client_id": client_id, "env": environment, "iat": iat, "exp": iat + ttl}
    return encode(claims), ttl
