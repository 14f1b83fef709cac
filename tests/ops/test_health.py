"""/healthz and /readyz: ready only when database, cache, channels, worker and upstream answer."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone

from staff.models import WorkerHeartbeat
from staff.tasks import heartbeat

pytestmark = pytest.mark.django_db(transaction=True)


def _active_environment(base_url: str) -> None:
    """The environment readiness probes (there is no fallback to an emulator URL any more)."""
    from gateway.models import Environment

    Environment.objects.create(name="Probed", kind="sandbox", base_url=base_url)


async def test_healthz_answers_ok_without_touching_anything(async_client) -> None:
    response = await async_client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_ok_with_a_fresh_heartbeat_and_a_live_emulator(
    client, settings, emulator_url
) -> None:
    _active_environment(emulator_url)
    heartbeat()

    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "cache", "channel_layer", "worker", "upstream"}
    assert all(check["status"] == "ok" for check in body["checks"].values())
    assert body["checks"]["worker"]["age_seconds"] < settings.PAYOPS_HEARTBEAT_MAX_AGE
    assert emulator_url in body["checks"]["upstream"]["detail"]


def test_readyz_fails_naming_the_worker_when_the_heartbeat_is_stale(
    client, settings, emulator_url
) -> None:
    _active_environment(emulator_url)
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
    assert set(others.values()) == {"ok"}, others


def test_readyz_fails_when_no_worker_ever_beat(client, settings, emulator_url) -> None:
    _active_environment(emulator_url)

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
    _active_environment(closed_port_url)
    heartbeat()

    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 503
    assert body["checks"]["upstream"]["status"] == "fail"
    assert closed_port_url in body["checks"]["upstream"]["detail"]
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
    from staff import health

    async def hangs() -> dict:
        await asyncio.sleep(3600)
        return {"status": "ok"}

    monkeypatch.setattr(health, "CHECK_TIMEOUT", 0.05)
    result = await health._run("cache", hangs)

    assert result["status"] == "fail"
    assert result["detail"] == "timed out after 0.05 s"


async def test_a_raising_check_is_reported_not_raised() -> None:
    from staff import health

    async def breaks() -> dict:
        raise ConnectionError("refused")

    result = await health._run("database", breaks)

    assert result["status"] == "fail"
    assert result["detail"] == "ConnectionError: refused"


def test_readyz_names_every_failing_check_when_the_channel_layer_is_down(
    client, settings, emulator_url
) -> None:
    _active_environment(emulator_url)
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
