"""API clients of the emulator: issuing credentials (shown once) and finding a client by API key."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass

from django.contrib.auth.hashers import check_password, make_password

from emulator.models import ApiClient


@dataclass(frozen=True)
class IssuedCredentials:
    client: ApiClient
    password: str
    api_key: str

    def as_dict(self) -> dict[str, str]:
        return {
            "client_id": str(self.client.client_id),
            "password": self.password,
            "api_key": self.api_key,
        }


def api_key_digest(api_key: str) -> str:
    return hashlib.sha256(api_key.encode()).hexdigest()


def client_create(
    *,
    name: str,
    rate_per_second: int | None = None,
    max_concurrent: int | None = None,
    weekly_quota: int | None = None,
) -> IssuedCredentials:
    """Creates a client; the password and API key exist in clear only in the returned value."""
    password = secrets.token_urlsafe(24)
    api_key = "emk_" + secrets.token_urlsafe(32)
    client = ApiClient.objects.create(
        name=name,
        client_id=uuid.uuid4(),
        password=make_password(password),
        api_key_digest=api_key_digest(api_key),
        api_key_prefix=api_key[:10],
        rate_per_second=rate_per_second,
        max_concurrent=max_concurrent,
        weekly_quota=weekly_quota,
    )
    return IssuedCredentials(client=client, password=password, api_key=api_key)


def client_by_api_key(api_key: str | None) -> ApiClient | None:
    if not api_key:
        return None
    return ApiClient.objects.filter(api_key_digest=api_key_digest(api_key)).first()


def client_check_password(client: ApiClient, password: str) -> bool:
    return check_password(password, client.password)
