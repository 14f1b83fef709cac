"""Quota gauge: weekly use from the call log, staff vs background, by operation, the forecast."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gateway.models import Environment, EnvironmentKind, UpstreamCall
from gateway.selectors import budget_forecast, iso_week_bounds, quota_gauges
from gateway.services.environments import environment_create

pytestmark = pytest.mark.django_db

# Wednesday noon of ISO week 2026-W48 (Monday 23 November).
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def _environment(name: str, budget: int, **extra: object) -> Environment:
    return environment_create(
        by=None,
        name=name,
        kind=EnvironmentKind.SANDBOX,
        base_url="https://api.example.test",
        client_id="c",
        password="p",
        api_key="k",
        weekly_budget=budget,
        **extra,  # type: ignore[arg-type]
    )


def _calls(
    environment: Environment,
    count: int,
    *,
    at: datetime,
    priority: str = "staff",
    operation: str = "quotation_get",
) -> None:
    UpstreamCall.objects.bulk_create(
        UpstreamCall(
            environment=environment,
            created_at=at,
            operation=operation,
            method="GET",
            path="/v1/quotations/x",
            status=200,
            priority=priority,
        )
        for _ in range(count)
    )


def test_iso_week_bounds_are_monday_to_monday_utc() -> None:
    assert iso_week_bounds(NOW) == (
        datetime(2026, 11, 23, tzinfo=UTC),
        datetime(2026, 11, 30, tzinfo=UTC),
    )
    sunday_night = datetime(2026, 11, 29, 23, 59, tzinfo=UTC)
    assert iso_week_bounds(sunday_night)[0] == datetime(2026, 11, 23, tzinfo=UTC)


def test_gauge_counts_this_week_by_kind_and_operation() -> None:
    env = _environment("Sandbox", 1000)
    other = _environment("Other", 1000)
    monday = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
    _calls(env, 30, at=monday, operation="quotation_create")
    _calls(env, 12, at=NOW - timedelta(hours=1), priority="background", operation="payout_get")
    _calls(env, 5, at=NOW - timedelta(hours=2), operation="auth")
    _calls(env, 40, at=datetime(2026, 11, 22, 23, 59, tzinfo=UTC))  # last week: not counted
    _calls(other, 7, at=NOW - timedelta(hours=1))

    gauges = {g.environment.name: g for g in quota_gauges(now=NOW)}
    gauge = gauges["Sandbox"]
    assert gauge.used == 47
    assert gauge.remaining == 953
    assert gauge.staff_calls == 35
    assert gauge.background_calls == 12
    assert gauge.background_budget == 500
    assert [(o.operation, o.calls) for o in gauge.operations] == [
        ("quotation_create", 30),
        ("payout_get", 12),
        ("auth", 5),
    ]
    assert gauge.operations[0].percent == 100.0
    assert gauge.operations[2].percent == round(100 * 5 / 30, 1)
    assert gauge.used_percent == 4.7
    assert gauges["Other"].used == 7


def test_forecast_runs_out_this_week_at_the_recent_pace() -> None:
    env = _environment("Busy", 200)
    _calls(env, 4, at=datetime(2026, 11, 23, 9, 0, tzinfo=UTC))
    _calls(env, 96, at=NOW - timedelta(hours=3))  # 96 in the last 24 h: 4 calls an hour
    (gauge,) = quota_gauges(now=NOW)
    assert gauge.used == 100
    assert gauge.forecast.calls_per_hour == 4.0
    # 100 remaining at 4 an hour: 25 hours from Wednesday noon.
    assert gauge.forecast.runs_out_at == datetime(2026, 11, 26, 13, 0, tzinfo=UTC)
    assert gauge.forecast.text == "Runs out Thu 26 Nov 13:00 UTC"


def test_forecast_not_this_week_when_the_pace_is_slow_or_nil() -> None:
    slow = _environment("Slow", 10_000)
    idle = _environment("Idle", 10_000)
    _calls(slow, 48, at=NOW - timedelta(hours=5))
    _calls(idle, 10, at=datetime(2026, 11, 23, 1, 0, tzinfo=UTC))  # none in the last 24 h
    gauges = {g.environment.name: g for g in quota_gauges(now=NOW)}
    assert gauges["Slow"].forecast.runs_out_at is None
    assert gauges["Slow"].forecast.text == "Runs out: not this week"
    assert gauges["Idle"].forecast.calls_per_hour == 0.0
    assert gauges["Idle"].forecast.text == "Runs out: not this week"


def test_forecast_when_the_budget_is_spent() -> None:
    env = _environment("Spent", 10)
    _calls(env, 12, at=NOW - timedelta(hours=1))
    (gauge,) = quota_gauges(now=NOW)
    assert gauge.remaining == 0
    assert gauge.used_percent == 100.0
    assert gauge.forecast.text.startswith("Budget spent")


def test_forecast_pace_window_is_clipped_to_the_week_start() -> None:
    monday_morning = datetime(2026, 11, 23, 2, 0, tzinfo=UTC)
    forecast = budget_forecast(
        now=monday_morning,
        used=100,
        budget=1000,
        recent_calls=100,
        window_start=datetime(2026, 11, 23, tzinfo=UTC),
    )
    # 100 calls in 2 hours: 50 an hour; 900 more take 18 hours.
    assert forecast.calls_per_hour == 50.0
    assert forecast.runs_out_at == datetime(2026, 11, 23, 20, 0, tzinfo=UTC)


def test_gauges_cost_two_queries_whatever_the_number_of_environments(
    django_assert_num_queries,  # type: ignore[no-untyped-def]
) -> None:
    for index in range(4):
        env = _environment(f"Env {index}", 1000)
        _calls(env, 20 + index, at=NOW - timedelta(hours=1), operation=f"op{index}")
        _calls(env, 3, at=NOW - timedelta(hours=2), priority="background")
    with django_assert_num_queries(2):
        gauges = quota_gauges(now=NOW)
        assert sum(g.used for g in gauges) == 20 + 21 + 22 + 23 + 12


def test_calls_since_counts_one_environment_by_priority_and_operation() -> None:
    from gateway.selectors import calls_since

    env, other = _environment("Counted", 100), _environment("Other", 100)
    _calls(env, 2, at=NOW - timedelta(minutes=30), priority="background", operation="payout_list")
    _calls(env, 1, at=NOW - timedelta(minutes=20), priority="background", operation="payout_get")
    _calls(env, 4, at=NOW - timedelta(minutes=10), priority="staff", operation="payout_list")
    _calls(env, 8, at=NOW - timedelta(hours=3), priority="background", operation="payout_list")
    _calls(env, 16, at=NOW - timedelta(minutes=5), priority="background", operation="user_get")
    _calls(other, 32, at=NOW - timedelta(minutes=5), priority="background", operation="payout_list")
    hour_ago = NOW - timedelta(hours=1)
    polling = ("payout_list", "payout_get")
    assert calls_since(environment_id=env.pk, since=hour_ago) == 23
    assert calls_since(environment_id=env.pk, since=hour_ago, background_only=True) == 19
    assert (
        calls_since(environment_id=env.pk, since=hour_ago, background_only=True, operations=polling)
        == 3
    )
    assert (
        calls_since(environment_id=env.pk, since=NOW - timedelta(days=1), operations=polling) == 15
    )
