"""/healthz and /readyz: ready only when every registered check (database ... upstream) answers;
warnings are listed and leave it ready."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone

from console.models import WorkerHeartbeat
from console.tasks import heartbeat
from gateway.models import Environment, EnvironmentKind

pytestmark = pytest.mark.django_db(transaction=True)


def sandbox_at(url: str, name: str = "Sandbox") -> Environment:
    """The default environment (the first active sandbox), pointing at url."""
    return Environment.objects.create(name=name, kind=EnvironmentKind.SANDBOX, base_url=url)


async def test_healthz_answers_ok_without_touching_anything(async_client) -> None:
    response = await async_client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_ok_with_a_fresh_heartbeat_and_a_live_emulator(
    client, settings, emulator_url
) -> None:
    sandbox_at(emulator_url)
    heartbeat()

    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert set(body["checks"]) >= {"database", "cache", "channel_layer", "worker", "upstream"}
    # Ready, with one thing to look at: nothing pushes this sandbox's events yet.
    assert body["warnings"] == ["webhook_receivers"]
    assert body["checks"]["webhook_receivers"]["status"] == "warning"
    assert all(
        check["status"] == "ok"
        for name, check in body["checks"].items()
        if name != "webhook_receivers"
    )
    assert body["checks"]["worker"]["age_seconds"] < settings.PAYOPS_HEARTBEAT_MAX_AGE
    assert body["checks"]["upstream"]["detail"] == (
        f"Sandbox: reachable, its API root {emulator_url}/sandbox "
        "answered (HTTP 404, expected: the root has no page and the probe sends no credentials)."
    )


def test_readyz_fails_naming_the_worker_when_the_heartbeat_is_stale(
    client, settings, emulator_url
) -> None:
    sandbox_at(emulator_url)
    heartbeat()
    stale = timezone.now() - timedelta(seconds=settings.PAYOPS_HEARTBEAT_MAX_AGE + 60)
    WorkerHeartbeat.objects.update(beat_at=stale)

    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "fail"
    assert body["checks"]["worker"]["status"] == "fail"
    assert body["checks"]["worker"]["age_seconds"] > settings.PAYOPS_HEARTBEAT_MAX_AGE
    others = {name: c["status"] for name, c in body["checks"].items() if name != "worker"}
    assert set(others.values()) == {"ok", "warning"}, others  # the warning: no receiver yet


def test_readyz_fails_when_no_worker_ever_beat(client, settings, emulator_url) -> None:
    sandbox_at(emulator_url)

    body = client.get("/readyz").json()

    assert body["status"] == "fail"
    assert body["checks"]["worker"] == {
        "status": "fail",
        "age_seconds": None,
        "detail": "no heartbeat recorded yet",
        "duration_ms": body["checks"]["worker"]["duration_ms"],
    }


def test_readyz_fails_naming_the_upstream_when_it_is_unreachable(
    client, settings, closed_port_url
) -> None:
    sandbox_at(closed_port_url)
    heartbeat()

    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 503
    assert body["checks"]["upstream"]["status"] == "fail"
    assert body["checks"]["upstream"]["detail"] == (
        f"Sandbox: unreachable, its API root {closed_port_url}/sandbox did not answer "
        "(ConnectError)."
    )
    assert body["checks"]["worker"]["status"] == "ok"
    assert body["checks"]["database"]["status"] == "ok"


def test_heartbeat_task_records_the_time_once_per_cluster(settings) -> None:
    before = timezone.now()
    first = heartbeat()
    second = heartbeat()

    rows = list(WorkerHeartbeat.objects.all())
    assert len(rows) == 1
    assert rows[0].cluster == settings.Q_CLUSTER["name"]
    assert before <= rows[0].beat_at
    assert rows[0].beat_at.isoformat() == second
    assert first <= second


async def test_a_hanging_check_fails_with_a_timeout_instead_of_blocking(monkeypatch) -> None:
    from console import health

    async def hangs() -> dict:
        await asyncio.sleep(3600)
        return {"status": "ok"}

    monkeypatch.setattr(health, "CHECK_TIMEOUT", 0.05)
    result = await health._run(health.ReadinessCheck("cache", hangs))

    assert result["status"] == "fail"
    assert result["detail"] == "timed out after 0.05 s"


async def test_a_raising_check_is_reported_not_raised() -> None:
    from console import health

    async def breaks() -> dict:
        raise ConnectionError("refused")

    result = await health._run(health.ReadinessCheck("database", breaks))

    assert result["status"] == "fail"
    assert result["detail"] == "ConnectionError: refused"


def test_readyz_names_every_failing_check_when_the_channel_layer_is_down(
    client, settings, emulator_url
) -> None:
    sandbox_at(emulator_url)
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},
        }
    }
    heartbeat()

    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 503
    assert body["checks"]["channel_layer"]["status"] == "fail"
    assert body["checks"]["database"]["status"] == "ok"


def test_the_gateway_adds_its_upstream_check_to_the_registry() -> None:
    from console.health import CHECKS
    from gateway.health import upstream_check

    assert CHECKS["upstream"].run is upstream_check


def test_a_broken_environment_nobody_uses_leaves_readyz_green(
    client, emulator_url, closed_port_url
) -> None:
    sandbox_at(emulator_url, "Sandbox")  # the oldest active sandbox: everyone's default
    sandbox_at(closed_port_url, "Mistyped spare")
    heartbeat()

    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 200, body
    assert "Mistyped spare" not in body["checks"]["upstream"]["detail"]
    assert body["checks"]["upstream"]["detail"].startswith("Sandbox: reachable, its API root")


def test_readyz_probes_the_environment_a_staff_member_chose_and_names_it(
    client, emulator_url, closed_port_url, roleless
) -> None:
    from gateway.models import StaffEnvironmentChoice

    sandbox_at(emulator_url, "Sandbox")
    chosen = sandbox_at(closed_port_url, "Typo")
    StaffEnvironmentChoice.objects.create(user=roleless, environment=chosen)
    heartbeat()

    response = client.get("/readyz")

    upstream = response.json()["checks"]["upstream"]
    assert response.status_code == 503
    assert upstream["status"] == "fail"
    assert upstream["detail"] == (
        f"Sandbox: reachable, its API root {emulator_url}/sandbox "
        "answered (HTTP 404, expected: the root has no page and the probe sends no credentials). "
        f"Typo: unreachable, its API root {closed_port_url}/sandbox did not answer (ConnectError)."
    )


def test_an_inactive_choice_is_not_probed(client, emulator_url, closed_port_url, roleless) -> None:
    from gateway.models import StaffEnvironmentChoice

    sandbox_at(emulator_url, "Sandbox")
    retired = sandbox_at(closed_port_url, "Retired")
    StaffEnvironmentChoice.objects.create(user=roleless, environment=retired)
    Environment.objects.filter(pk=retired.pk).update(is_active=False)
    heartbeat()

    assert client.get("/readyz").status_code == 200


def test_readyz_without_any_environment_says_there_was_nothing_to_probe(client) -> None:
    heartbeat()

    response = client.get("/readyz")

    upstream = response.json()["checks"]["upstream"]
    assert response.status_code == 200
    assert upstream["status"] == "ok"
    assert upstream["detail"] == "No environment is in use: nothing to probe."


async def test_a_warning_is_listed_and_leaves_the_probe_ready(monkeypatch) -> None:
    from console import health

    async def warns() -> dict:
        return {"status": "warning", "detail": "look at this"}

    async def fine() -> dict:
        return {"status": "ok"}

    async def fails() -> dict:
        return {"status": "fail"}

    monkeypatch.setattr(
        health,
        "CHECKS",
        {
            "a_warning": health.ReadinessCheck("a_warning", warns),
            "fine": health.ReadinessCheck("fine", fine),
        },
    )
    report = await health.readiness()
    assert report["status"] == "ok"
    assert report["warnings"] == ["a_warning"]
    assert report["checks"]["a_warning"]["detail"] == "look at this"

    health.CHECKS["broken"] = health.ReadinessCheck("broken", fails)
    report = await health.readiness()
    assert report["status"] == "fail"
    assert report["warnings"] == ["a_warning"]


def test_system_health_shows_warnings_on_the_overall_badge(client_for, monkeypatch) -> None:
    from console import health

    async def warns() -> dict:
        return {"status": "warning", "detail": "look at this"}

    monkeypatch.setattr(health, "CHECKS", {"a_warning": health.ReadinessCheck("a_warning", warns)})

    html = client_for("admin").get("/system/health/").content.decode()

    assert 'class="badge badge-warning" data-testid="overall-status">Passing, 1 warning<' in html
    assert "look at this" in html
