"""URL joining keeps the sandbox prefix; the limiter's decision respects every limit."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest

from gateway.limiter import pause_seconds
from gateway.limiter.policy import LimiterState, Limits, Priority, decide, release
from gateway.models import Environment, EnvironmentKind
from gateway.transport import join_url

LIMITS = Limits(rate_per_second=10, max_concurrent=2, weekly_budget=100, background_share=0.5)


@pytest.mark.parametrize("path", ["v1/quotations", "/v1/quotations", "auth", "/auth"])
@pytest.mark.parametrize("root", ["http://up.test/sandbox", "http://up.test/sandbox/"])
def test_sandbox_prefix_survives_joining(root: str, path: str) -> None:
    url = join_url(root, path)
    assert url.startswith("http://up.test/sandbox/")
    # The bug this guards against: urljoin with a leading slash silently hits production.
    assert urljoin(root, "/v1/quotations") == "http://up.test/v1/quotations"


def test_path_parameters_are_one_encoded_segment() -> None:
    url = join_url("http://up.test/sandbox", "v1/quotations/{}", "../../auth")
    assert url == "http://up.test/sandbox/v1/quotations/..%2F..%2Fauth"


def test_environment_api_root() -> None:
    sandbox = Environment(kind=EnvironmentKind.SANDBOX, base_url="https://api.example.com/")
    production = Environment(kind=EnvironmentKind.PRODUCTION, base_url="https://api.example.com")
    assert join_url(sandbox.api_root, "/auth") == "https://api.example.com/sandbox/auth"
    assert join_url(production.api_root, "/auth") == "https://api.example.com/auth"


def _grant(state: LimiterState, now: float, caller: str, priority: Priority = Priority.STAFF):
    return decide(state, now=now, limits=LIMITS, priority=priority, caller=caller, lease_seconds=60)


def test_concurrency_limit_and_release() -> None:
    state = LimiterState()
    assert _grant(state, 0.0, "a").granted
    assert _grant(state, 0.0, "b").granted
    third = _grant(state, 0.0, "c")
    assert not third.granted and third.wait > 0
    release(state, caller="a", now=0.01)
    assert _grant(state, 0.01, "c").granted


def test_crashed_lease_expires() -> None:
    state = LimiterState()
    decide(state, now=0, limits=LIMITS, priority=Priority.STAFF, caller="a", lease_seconds=5)
    decide(state, now=0, limits=LIMITS, priority=Priority.STAFF, caller="b", lease_seconds=5)
    assert not _grant(state, 4.0, "c").granted
    assert _grant(state, 5.5, "c").granted


def test_rate_window_never_admits_more_than_the_rate() -> None:
    state = LimiterState()
    granted: list[float] = []
    now = 0.0
    while now < 5.0:
        caller = f"c{now}"
        if _grant(state, now, caller).granted:
            granted.append(now)
            release(state, caller=caller, now=now)
        now = round(now + 0.001, 3)
    for start in granted:
        in_window = [t for t in granted if start <= t < start + 1.0]
        assert len(in_window) <= 10
    assert len(granted) >= 45  # the limiter also lets the rate be used


def test_weekly_budget_and_background_share() -> None:
    state = LimiterState()
    for i in range(50):
        assert _grant(state, i * 1.0, f"b{i}", Priority.BACKGROUND).granted
        release(state, caller=f"b{i}", now=i * 1.0)
    refused = _grant(state, 60.0, "b-last", Priority.BACKGROUND)
    assert not refused.granted and "background" in refused.exhausted
    for i in range(50):
        assert _grant(state, 100 + i * 1.0, f"s{i}").granted
        release(state, caller=f"s{i}", now=100 + i * 1.0)
    spent = _grant(state, 200.0, "s-last")
    assert not spent.granted and "weekly" in spent.exhausted


def test_background_yields_to_waiting_staff() -> None:
    state = LimiterState()
    assert _grant(state, 0.0, "x").granted
    assert _grant(state, 0.0, "y").granted
    assert not _grant(state, 0.0, "staff").granted  # staff now queued
    release(state, caller="x", now=0.01)
    assert not _grant(state, 0.01, "bg", Priority.BACKGROUND).granted
    assert _grant(state, 0.01, "staff").granted


def test_upstream_headers_pause() -> None:
    assert pause_seconds(429, {"retry-after": "3"}) == 3
    assert pause_seconds(200, {"ratelimit-remaining": "0", "ratelimit-reset": "3600"}) == 3600
    # Within the per-second window our own log already holds the line.
    assert pause_seconds(200, {"ratelimit-remaining": "0", "ratelimit-reset": "1"}) == 0
    assert pause_seconds(200, {"ratelimit-remaining": "5", "ratelimit-reset": "3600"}) == 0
    state = LimiterState()
    state.paused_until = 10.0
    blocked = _grant(state, 1.0, "a")
    assert not blocked.granted and blocked.wait >= 9


def test_a_call_counts_in_the_window_from_its_end() -> None:
    limits = Limits(rate_per_second=1, max_concurrent=5, weekly_budget=100, background_share=1)
    state = LimiterState()
    assert decide(
        state, now=0.0, limits=limits, priority=Priority.STAFF, caller="a", lease_seconds=60
    ).granted
    # Still in flight at 5 s: the upstream may not even have counted it yet.
    waiting = decide(
        state, now=5.0, limits=limits, priority=Priority.STAFF, caller="b", lease_seconds=60
    )
    assert not waiting.granted
    release(state, caller="a", now=5.0)
    assert not decide(
        state, now=5.5, limits=limits, priority=Priority.STAFF, caller="b", lease_seconds=60
    ).granted
    assert decide(
        state, now=6.05, limits=limits, priority=Priority.STAFF, caller="b", lease_seconds=60
    ).granted
