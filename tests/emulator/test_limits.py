"""Per-API-key limits over real HTTP: rate, concurrency under a burst, weekly quota, headers."""

import asyncio
from datetime import timedelta

import httpx
import pytest
from django.test import override_settings

from emulator import clock
from emulator.limits import LIMITER, RateLimiter, iso_week, seconds_to_next_week
from emulator.models import WeeklyUsage
from tests.emulator.conftest import make_credentials

pytestmark = pytest.mark.django_db(transaction=True)


def test_limiter_counts_the_window_and_in_flight():
    limiter = RateLimiter()
    first = limiter.acquire("k", rate=2, max_concurrent=1)
    assert (first.admitted, first.limit, first.remaining) == (True, 2, 1)
    busy = limiter.acquire("k", rate=2, max_concurrent=1)
    assert (busy.admitted, busy.reason, busy.retry_after) == (False, "concurrency", 1)
    limiter.release("k")
    second = limiter.acquire("k", rate=2, max_concurrent=1)
    assert (second.admitted, second.remaining) == (True, 0)
    limiter.release("k")
    third = limiter.acquire("k", rate=2, max_concurrent=1)
    assert (third.admitted, third.reason, third.remaining) == (False, "rate", 0)
    assert third.retry_after is not None and third.retry_after >= 1
    assert limiter.peak_in_flight("k") == 1


async def _burst(url, headers, count):
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        return await asyncio.gather(
            *[client.get(f"/sandbox/v1/quotations/{n}", headers=headers) for n in range(count)]
        )


def test_concurrent_burst_is_limited(live_url, authed):
    creds = make_credentials("burst", rate_per_second=10, max_concurrent=2)
    headers = authed("sandbox", creds)
    responses = asyncio.run(_burst(live_url, headers, 30))
    statuses = [r.status_code for r in responses]
    limited = [r for r in responses if r.status_code == 429]
    admitted = [r for r in responses if r.status_code != 429]
    assert limited, statuses
    assert all(r.status_code == 404 for r in admitted)  # unknown quotes: the call ran
    for response in limited:
        assert int(response.headers["Retry-After"]) >= 1
        assert response.json()["code"] == "rate_limited"
    for response in responses:
        assert response.headers["RateLimit-Limit"] == "10"
        assert int(response.headers["RateLimit-Remaining"]) >= 0
    # The server's own record: never more than 2 in flight, never more than 10 in one second.
    assert LIMITER.peak_in_flight(f"client:{creds.pk}") <= 2
    assert LIMITER.peak_window(f"client:{creds.pk}") <= 10


def test_rate_per_second_over_http(http, authed):
    creds = make_credentials("rate", rate_per_second=3, max_concurrent=50)
    headers = authed("sandbox", creds)  # 1 of 3 in this second
    statuses = [http.get("/sandbox/v1/quotations/x", headers=headers).status_code for _ in range(5)]
    assert 429 in statuses, statuses
    assert LIMITER.peak_window(f"client:{creds.pk}") <= 3


def test_weekly_quota(http, authed):
    creds = make_credentials("quota", rate_per_second=1000, max_concurrent=50, weekly_quota=3)
    headers = authed("sandbox", creds)  # request 1 of 3
    assert http.get("/sandbox/v1/quotations/x", headers=headers).status_code == 404
    last = http.get("/sandbox/v1/quotations/x", headers=headers)
    assert last.status_code == 404
    assert (last.headers["RateLimit-Limit"], last.headers["RateLimit-Remaining"]) == ("3", "0")
    refused = http.get("/sandbox/v1/quotations/x", headers=headers)
    assert refused.status_code == 429
    assert refused.json() == {"code": "rate_limited", "message": "weekly request quota exceeded"}
    assert int(refused.headers["Retry-After"]) == pytest.approx(
        seconds_to_next_week(clock.now()), abs=5
    )
    assert WeeklyUsage.objects.get(client_id=creds.pk).count == 3
    clock.advance(seconds_to_next_week(clock.now()) + 1)
    headers = authed("sandbox", creds)  # a new week: the old token has expired meanwhile
    assert http.get("/sandbox/v1/quotations/x", headers=headers).status_code == 404


def test_iso_week_keys():
    monday = clock.real_now().replace(year=2026, month=11, day=23, hour=0, minute=0, second=0)
    assert iso_week(monday) == "2026-W48"
    assert iso_week(monday - timedelta(seconds=1)) == "2026-W47"
    assert seconds_to_next_week(monday) == 7 * 86400


def test_control_and_healthz_are_not_limited(http, control):
    for _ in range(15):
        assert control.get("/_control/faults").status_code == 200
        health = http.get("/healthz")
        assert health.status_code == 200
        assert "RateLimit-Limit" not in health.headers


def test_requests_without_a_key_are_limited_by_address(http):
    with override_settings(EMULATOR_RATE_PER_SECOND=2):
        responses = [http.post("/sandbox/auth", json={}) for _ in range(5)]
    statuses = [r.status_code for r in responses]
    assert 429 in statuses, statuses
    assert set(statuses) <= {401, 429}
    assert all(r.headers["RateLimit-Limit"] == "2" for r in responses)


def test_weekly_counts_survive_a_restart_through_the_database(http, authed):
    from emulator.limits import WEEKLY

    creds = make_credentials("restart", rate_per_second=1000, max_concurrent=50, weekly_quota=5)
    headers = authed("sandbox", creds)  # 1
    WEEKLY.flush()
    week = iso_week(clock.now())
    assert WeeklyUsage.objects.get(client_id=creds.pk, week=week).count == 1
    # A "restart": the process forgets its counts; the stored row says 4 were used already.
    WEEKLY.reset()
    WeeklyUsage.objects.filter(client_id=creds.pk, week=week).update(count=4)
    assert http.get("/sandbox/v1/quotations/x", headers=headers).status_code == 404  # 5 of 5
    assert http.get("/sandbox/v1/quotations/x", headers=headers).status_code == 429
    assert WeeklyUsage.objects.get(client_id=creds.pk, week=week).count == 5


def test_weekly_flush_writes_pending_counts(http, authed):
    from emulator.limits import WEEKLY

    creds = make_credentials("flush", rate_per_second=1000, max_concurrent=50)
    headers = authed("sandbox", creds)
    for _ in range(4):
        http.get("/sandbox/v1/quotations/x", headers=headers)
    WEEKLY.flush()
    assert WeeklyUsage.objects.get(client_id=creds.pk).count == 5


@pytest.mark.parametrize(
    ("path", "limited"),
    [
        ("/", False),
        ("/healthz", False),
        ("/_control/clock", False),
        ("/docs", False),
        ("/sandbox/docs", False),
        ("/sandbox/openapi.json", False),
        ("/openapi.json", False),
        ("/static/ninja/swagger-ui.css", False),
        ("/sandbox/auth", True),
        ("/sandbox/v1/quotations/x", True),
        ("/v1/users", True),
        ("/nowhere", True),  # unknown paths answer like the API, with RateLimit headers
        ("/staticky", True),
    ],
)
def test_only_the_api_is_limited(path, limited):
    from emulator.edge import is_limited_path

    assert is_limited_path(path) is limited


async def _docs_page_burst(url):
    # What a browser opening the docs fetches, at once, with no API key (limited by peer).
    paths = ["/sandbox/docs", "/sandbox/openapi.json", "/docs", "/openapi.json"]
    paths += [f"/static/ninja/{name}" for name in ("swagger-ui.css", "swagger-ui-bundle.js")] * 6
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        return await asyncio.gather(*[client.get(path) for path in paths])


@override_settings(EMULATOR_RATE_PER_SECOND=2, EMULATOR_MAX_CONCURRENT=1)
def test_the_docs_page_and_its_static_files_are_never_rate_limited(live_url):
    responses = asyncio.run(_docs_page_burst(live_url))
    assert [r.status_code for r in responses if r.status_code == 429] == []
    assert all("RateLimit-Limit" not in r.headers for r in responses)
    assert [r.status_code for r in responses[:4]] == [200, 200, 200, 200]
