"""Readiness of the upstream: do the API roots of the environments in use answer at all?"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils.translation import gettext

from gateway.models import Environment
from gateway.selectors import environment_in_use_list

# Gateway pages the upstream's own load balancer answers with when the service behind it is down.
_UNAVAILABLE = (502, 503, 504)


async def _probe(client: httpx.AsyncClient, environment: Environment) -> tuple[bool, str]:
    """(reachable, one sentence naming the environment and saying what was checked and found),
    in the active language (the health page's reader's; /readyz's caller's)."""
    url = environment.api_root
    where = {"name": environment.name, "url": url}
    try:
        response = await client.get(url)
    except httpx.TimeoutException:
        return False, gettext(
            "%(name)s: unreachable, its API root %(url)s did not answer within %(seconds)s s."
        ) % {**where, "seconds": settings.GATEWAY_HEALTH_TIMEOUT}
    except httpx.HTTPError as exc:
        return False, gettext(
            "%(name)s: unreachable, its API root %(url)s did not answer (%(error)s)."
        ) % {**where, "error": type(exc).__name__}
    code = response.status_code
    if code in _UNAVAILABLE:
        return False, gettext(
            "%(name)s: the upstream is down, its API root %(url)s answered with an error page "
            "(HTTP %(code)s)."
        ) % {**where, "code": code}
    # Any other answer proves the service is up: the probe sends no credentials, and the API
    # root has no page of its own, so 401, 403 or 404 there is the expected answer.
    return True, gettext(
        "%(name)s: reachable, its API root %(url)s answered (HTTP %(code)s, expected: the root "
        "has no page and the probe sends no credentials)."
    ) % {**where, "code": code}


async def upstream_check() -> dict[str, Any]:
    """
    The "upstream" readiness check: probe the API root of each environment in use (the ones staff
    have chosen, and the default), concurrently, and fail only if one of them is unreachable. An
    active environment nobody works in is not probed: a mistyped spare must not take the whole
    service out of rotation.

    Any HTTP answer counts as reachable: an unauthenticated GET of the API root may well be 401 or
    404, which still proves the service is up; only connection errors, timeouts and gateway 5xx
    pages mean unreachable. The probe sends no API key, so the upstream bills none of it to us.
    """
    environments = await sync_to_async(lambda: list(environment_in_use_list()))()
    if not environments:
        return {"status": "ok", "detail": gettext("No environment is in use: nothing to probe.")}
    timeout = httpx.Timeout(settings.GATEWAY_HEALTH_TIMEOUT)
    async with httpx.AsyncClient(timeout=timeout) as client:
        outcomes = await asyncio.gather(*(_probe(client, env) for env in environments))
    status = "ok" if all(reachable for reachable, _ in outcomes) else "fail"
    return {"status": status, "detail": " ".join(line for _, line in outcomes)}
