"""Proactive renewal of access tokens for every active environment (the schedule's service)."""

from __future__ import annotations

import logging

from django.conf import settings

from gateway import tokens, transport
from gateway.errors import UpstreamError
from gateway.models import Environment
from gateway.target import resolve

logger = logging.getLogger(__name__)


async def refresh_tokens(*, within: float | None = None) -> int:
    """Renew tokens expiring within `within` seconds (default: twice the schedule period)."""
    horizon = float(within if within is not None else settings.GATEWAY_TOKEN_REFRESH_EVERY * 2)
    renewed = 0
    async for environment in Environment.objects.filter(is_active=True):
        if not environment.has_credentials:
            continue
        try:
            if await tokens.refresh_if_due(
                resolve(environment), transport.authenticate, within=horizon
            ):
                renewed += 1
        except (UpstreamError, TimeoutError) as exc:
            logger.warning("token renewal failed for environment %s: %s", environment.pk, exc)
    return renewed
