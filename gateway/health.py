"""Readiness of the upstream: does the active environment's API root answer?"""

from __future__ import annotations

import httpx
from django.conf import settings

from gateway.models import Environment


async def _probe_url() -> str | None:
    """The URL to probe: the first active environment's API root (None when there is none)."""
    environment = await Environment.objects.filter(is_active=True).order_by("kind", "name").afirst()
    return environment.api_root if environment is not None else None


async def upstream_reachable() -> tuple[bool, str]:
    """
    (True, detail) when the upstream answers HTTP at all. Any status counts as reachable: an
    unauthenticated GET of the API root may well be 401/404, which still proves the service is up;
    only connection errors and timeouts (and gateway 5xx pages) mean unreachable. This check spends
    no API budget worth counting: it sends no API key, so the upstream does not bill it to ours.
    """
    try:
        url = await _probe_url()
    except Exception as exc:  # the database itself may be what is down
        return False, f"cannot read environments: {type(exc).__name__}"
    if url is None:
        return True, "no active environment to probe"
    timeout = httpx.Timeout(settings.GATEWAY_HEALTH_TIMEOUT)
    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            response = await client.get(url)
    except httpx.TimeoutException:
        return False, f"{url}: timed out"
    except httpx.HTTPError as exc:
        return False, f"{url}: {type(exc).__name__}"
    if response.status_code in (502, 503, 504):
        return False, f"{url}: HTTP {response.status_code}"
    return True, f"{url}: HTTP {response.status_code}"
