"""URL joining keeps the sandbox prefix; the limiter's decision respects every limit."""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

import pytest

from gateway.limiter.policy import (
    Answer,
    LimiterState,
    Limits,
    Priority,
    Refusal,
    cancel,
    decide,
    effective,
    observe,
    release,
    renew,
)
from gateway.models import Environment, EnvironmentKind
from gateway.transport import join_url, quota_refused

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


def _answer(status: int, **headers: str) -> Answer:
    return Answer.from_headers(status, {k.replace("_", "-"): v for k, v in headers.items()})


def _observe(state: LimiterState, answer: Answer, *, now: float = 0.0, in_flight: int = 1) -> Any:
    return observe(state, answer, now=now, in_flight=in_flight, learn_for=600)


def test_a_rate_429_pauses_everyone_for_its_retry_after() -> None:
    state = LimiterState()
    refused = _answer(429, retry_after="1", ratelimit_remaining="0", ratelimit_reset="1")
    assert _observe(state, refused, now=0.0) is Refusal.RATE
    blocked = _grant(state, 0.2, "a")
    assert not blocked.granted and blocked.wait >= 0.8 and not blocked.exhausted
    # Remaining 0 within the per-second window: our own log already holds that line.
    calm = LimiterState()
    _observe(calm, _answer(200, ratelimit_remaining="0", ratelimit_reset="1"))
    assert calm.paused_until == 0 and calm.quota_until == 0


def test_a_quota_429_stops_everyone_at_once_instead_of_a_days_long_wait() -> None:
    state = LimiterState()
    days = str(3 * 86400)
    refused = _answer(
        429,
        retry_after=days,
        ratelimit_limit="10000",
        ratelimit_remaining="0",
        ratelimit_reset=days,
    )
    assert refused.refusal is Refusal.QUOTA
    assert _observe(state, refused, now=100.0) is Refusal.QUOTA
    later = _grant(state, 101.0, "b")
    assert not later.granted and "weekly quota" in later.exhausted
    assert later.wait == pytest.approx(3 * 86400 - 1)
    assert quota_refused(refused, patience=30)
    # A short Retry-After is waited out, a longer one than the caller's patience is not.
    assert not quota_refused(_answer(429, retry_after="1"), patience=30)
    assert quota_refused(Answer(429, retry_after=45, reset=1), patience=30)


def test_a_spent_quota_announced_on_a_success_stops_everyone_until_its_reset() -> None:
    state = LimiterState()
    _observe(
        state,
        _answer(200, ratelimit_limit="10000", ratelimit_remaining="0", ratelimit_reset="3600"),
        now=0.0,
    )
    assert state.quota_limit == 10000 and state.quota_remaining == 0
    assert _grant(state, 10.0, "a").exhausted
    assert _grant(state, 3601.0, "a").granted


def test_the_upstream_rate_from_ratelimit_limit_lowers_a_looser_configuration() -> None:
    state = LimiterState()
    _observe(state, _answer(200, ratelimit_limit="2", ratelimit_remaining="1", ratelimit_reset="1"))
    assert state.learned_rate == 2
    limits = Limits(rate_per_second=10, max_concurrent=5, weekly_budget=100, background_share=1)
    assert effective(limits, state, now=0).rate_per_second == 2
    for caller, now in (("a", 0.0), ("b", 0.001)):
        assert decide(
            state, now=now, limits=limits, priority=Priority.STAFF, caller=caller, lease_seconds=3
        ).granted
        release(state, caller=caller, now=now)
    third = decide(
        state, now=0.002, limits=limits, priority=Priority.STAFF, caller="c", lease_seconds=3
    )
    assert not third.granted  # the configured 10/s would have let it through
    # Never raised above the configuration.
    _observe(state, _answer(200, ratelimit_limit="50", ratelimit_reset="1"))
    assert effective(limits, state, now=0).rate_per_second == 10


def test_a_concurrency_refusal_teaches_a_lower_limit_for_a_while() -> None:
    state = LimiterState()
    limits = Limits(rate_per_second=10, max_concurrent=3, weekly_budget=100, background_share=1)
    refused = _answer(429, retry_after="1", ratelimit_remaining="7", ratelimit_reset="1")
    assert refused.refusal is Refusal.CONCURRENCY
    assert _observe(state, refused, now=0.0, in_flight=3) is Refusal.CONCURRENCY
    assert state.paused_until == 0  # the calls in flight were not refused: nobody pauses
    assert effective(limits, state, now=1.0).max_concurrent == 2
    assert effective(limits, state, now=601.0).max_concurrent == 3
    _observe(state, refused, now=700.0, in_flight=1)
    assert effective(limits, state, now=701.0).max_concurrent == 1


def test_a_lease_renewed_while_in_flight_outlives_a_dead_callers_lease() -> None:
    state = LimiterState()
    limits = Limits(rate_per_second=10, max_concurrent=1, weekly_budget=100, background_share=1)
    assert decide(
        state, now=0.0, limits=limits, priority=Priority.STAFF, caller="alive", lease_seconds=3
    ).granted
    for now in (1.0, 2.0, 3.0, 4.0):
        renew(state, caller="alive", now=now, lease_seconds=3)
    assert not decide(
        state, now=6.5, limits=limits, priority=Priority.STAFF, caller="x", lease_seconds=3
    ).granted
    # Nobody renews (the process was killed): the slot frees within one lease.
    assert decide(
        state, now=7.01, limits=limits, priority=Priority.STAFF, caller="x", lease_seconds=3
    ).granted


def test_a_cancelled_grant_costs_nothing() -> None:
    state = LimiterState()
    first = _grant(state, 0.0, "a", Priority.BACKGROUND)
    assert first.granted and first.in_flight == 1
    cancel(state, caller="a", priority=Priority.BACKGROUND)
    assert state.leases == {} and state.starts == {}
    assert state.week_count == 0 and state.background_count == 0


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
