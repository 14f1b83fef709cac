"""Thin django-q2 tasks of the gateway: renew access tokens before they expire."""

from __future__ import annotations

from gateway.client import call_sync
from gateway.services.token_refresh import refresh_tokens


def refresh_upstream_tokens() -> int:
    """Renew every active environment's token that expires within the next schedule period."""
    return call_sync(refresh_tokens)
