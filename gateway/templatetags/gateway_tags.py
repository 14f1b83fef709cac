"""Template helpers of the gateway pages: masked credentials."""

from __future__ import annotations

from django import template

from gateway import crypto
from gateway.models import Environment

register = template.Library()

CREDENTIALS = ("client_id", "password", "api_key")


@register.filter
def masked(environment: Environment, credential: str) -> str:
    """`{{ environment|masked:"api_key" }}`: the last few characters at most, never the secret."""
    if credential not in CREDENTIALS or not getattr(environment, f"{credential}_encrypted"):
        return "not set"
    try:
        return crypto.mask(getattr(environment, credential))
    except crypto.SecretDecryptionError:
        return "unreadable: its key was removed"
