"""The gateway's "upstream" readiness check, against the real emulator over HTTP."""

from __future__ import annotations

import pytest

from gateway.health import upstream_check
from gateway.models import Environment, EnvironmentKind
from tests.gateway.conftest import LiveEmulator
from tests.servers import serve_in_thread


async def test_upstream_check_reaches_the_environment_in_use_and_says_what_it_checked(
    live_emulator: LiveEmulator, sandbox: Environment
) -> None:
    result = await upstream_check()

    assert result["status"] == "ok", result
    assert result["detail"] == (
        f"{sandbox.name}: reachable, its API root {live_emulator.url}/sandbox "
        "answered (HTTP 404, expected: the root has no page and the probe sends no credentials)."
    )
    # The probe sends no API key: the upstream saw an unauthenticated GET of the API root only.
    assert live_emulator.witness.count("/sandbox", method="GET") == 1


async def _unavailable(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
    """A load balancer whose service is down: 503 for everything but its own /healthz."""
    if scope["type"] != "http":
        return
    status = 200 if scope["path"] == "/healthz" else 503  # serve_in_thread waits on /healthz
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b"Service Unavailable"})


@pytest.mark.django_db(transaction=True)
def test_upstream_check_reads_a_503_page_as_unavailable() -> None:
    from asgiref.sync import async_to_sync

    with serve_in_thread(_unavailable, lifespan="off") as url:
        Environment.objects.create(name="Down", kind=EnvironmentKind.SANDBOX, base_url=url)
        result = async_to_sync(upstream_check)()

    assert result == {
        "status": "fail",
        "detail": f"Down: the upstream is down, its API root {url}/sandbox answered with an "
        "error page (HTTP 503).",
    }
