"""Template helpers of the gateway pages: masked credentials."""

from __future__ import annotations

from django import template

from gateway.models import Environment

register = template.Library()


@register.filter
def masked(environment: Environment, credential: str) -> str:
    """`{{ environment|masked:"api_key" }}`: the last few characters at most, never the secret."""
    return environment.credential_masked(credential)
