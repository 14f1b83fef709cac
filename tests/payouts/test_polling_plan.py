"""The polling plan, a pure function: cadences, due selection, window grouping, stragglers."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta

import pytest

from payouts.tracking.polling.due import (
    Rules,
    Tracked,
    cadence,
    jitter,
    straggler_delay,
    timing,
)
from payouts.tracking.polling.plan import Kind, Population, next_look, plan

NOW = datetime(2026, 11, 18, 12, 0, tzinfo=UTC)  # a Wednesday
RULES = Rules()
MIN, HOUR, DAY = timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)
_keys = itertools.count(1)


def payout(
    status: str = "processing",
    *,
    entered: timedelta = 2 * HOUR,  # how long ago it reached `status`
    created: timedelta | None = None,  # how long ago the upstream made it
    heard: timedelta | None = None,  # how long ago a poll or an event last told about it
    misses: int = 0,
    missed: timedelta | None = None,
) -> Tracked:
    key = next(_keys)
    made = NOW - (created if created is not None else entered)
    return Tracked(
        key=key,
        upstream_id=f"po-{key}",
        status=status,
        entered_at=NOW - entered,
        created_from=made,
        created_until=made + MIN,
        heard_at=NOW - heard if heard is not None else None,
        misses=misses,
        missed_at=NOW - missed if missed is not None else None,
    )


def due(t: Tracked, now: datetime = NOW) -> bool:
    when = timing(t, now=now, rules=RULES)
    return when is not None and when.due


# --- Cadences ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "age", "every"),
    [
        ("processing", 5 * MIN, RULES.first),
        ("created", 50 * MIN, RULES.first),
        ("pending", 2 * HOUR, 30 * MIN),
        ("kyt_pending", 10 * HOUR, HOUR),
        ("submitting", 3 * DAY, 6 * HOUR),
        ("processing", 20 * DAY, DAY),
        ("in_review", 2 * HOUR, HOUR),
        ("in_review", 3 * DAY, 4 * HOUR),
        ("in_review", 9 * DAY, 12 * HOUR),
        ("completed", 29 * DAY, 12 * HOUR),
    ],
)
def test_cadence_by_state_and_age(status: str, age: timedelta, every: timedelta) -> None:
    assert cadence(status, age, RULES) == every


@pytest.mark.parametrize(("status", "age"), [("completed", 31 * DAY), ("failed", HOUR)])
def test_not_watched_past_the_return_window_or_when_final(status: str, age: timedelta) -> None:
    assert cadence(status, age, RULES) is None
    assert timing(payout(status, entered=age), now=NOW, rules=RULES) is None


def test_the_first_cadence_is_a_setting() -> None:
    assert cadence("processing", MIN, Rules(first=timedelta(minutes=3))) == 3 * MIN


# --- Due -------------------------------------------------------------------------------------


def test_due_once_its_cadence_has_passed_since_the_last_news() -> None:
    # In review for 3 days (every 4 h): last read 3 h ago is not due, 5 h ago is.
    assert not due(payout("in_review", entered=3 * DAY, heard=3 * HOUR))
    assert due(payout("in_review", entered=3 * DAY, heard=5 * HOUR))


def test_an_event_received_recently_is_fresh_news() -> None:
    # Never polled, in its state for two days (every 6 h), but an event came 10 minutes ago.
    assert due(payout("processing", entered=2 * DAY))
    assert not due(payout("processing", entered=2 * DAY, heard=10 * MIN))


def test_jitter_spreads_due_times_within_a_tenth_of_the_cadence_and_is_stable() -> None:
    values = [jitter(f"po-{n}") for n in range(200)]
    assert all(0 <= v < 1 for v in values)
    assert jitter("po-7") == jitter("po-7")
    assert max(values) - min(values) > 0.5  # spread, not one instant
    t = payout("completed", entered=3 * DAY, heard=HOUR)
    when = timing(t, now=NOW, rules=RULES)
    assert when is not None
    assert NOW - HOUR + 12 * HOUR <= when.due_at < NOW - HOUR + 12 * HOUR * 1.1


def test_the_most_overdue_goes_first() -> None:
    late = payout("in_review", entered=3 * DAY, heard=20 * HOUR, created=3 * DAY)
    recent = payout("in_review", entered=3 * DAY, heard=5 * HOUR, created=10 * DAY)
    result = plan([recent, late], now=NOW, rules=RULES, population=Population(), allowance=1)
    assert [q.due for q in result.queries] == [(late.key,)]
    assert [q.due for q in result.deferred] == [(recent.key,)]


# --- Which reads cover the due payouts ----------------------------------------------------------


def test_fresh_payouts_in_mixed_states_are_read_by_one_window_listing() -> None:
    fresh = [payout(s, entered=20 * MIN) for s in ("created", "pending", "processing", "created")]
    result = plan(fresh, now=NOW, rules=RULES, population=Population(), allowance=10)
    assert len(result.queries) == 1
    (query,) = result.queries
    assert (query.kind, query.status, query.estimate) == (Kind.WINDOW, None, 1)
    assert set(query.covers) == {t.key for t in fresh}
    # Narrow: the creation day (with the clock margin), not everything since the oldest payout.
    assert query.from_date == query.to_date == NOW.date()


def test_a_crowded_window_is_read_by_status_instead() -> None:
    fresh = [payout(s, entered=20 * MIN) for s in ("pending", "processing", "processing")]
    crowded = Population(others_per_day={"": 900.0, "PENDING": 10.0, "PROCESSING": 20.0})
    result = plan(fresh, now=NOW, rules=RULES, population=crowded, allowance=10)
    assert {(q.kind, q.status) for q in result.queries} == {
        (Kind.STATUS, "PENDING"),
        (Kind.STATUS, "PROCESSING"),
    }
    assert result.estimate == 2


def test_a_lonely_payout_in_a_crowded_window_is_read_by_itself() -> None:
    lone = payout("in_review", entered=3 * DAY, heard=5 * HOUR)
    crowded = Population(others_per_day={"": 900.0, "IN_REVIEW": 300.0})
    result = plan([lone], now=NOW, rules=RULES, population=crowded, allowance=10)
    assert [(q.kind, q.upstream_id) for q in result.queries] == [(Kind.GET, lone.upstream_id)]


def test_completed_payouts_are_watched_for_returns_by_one_failed_listing() -> None:
    completed = [
        payout("completed", entered=n * DAY + 14 * HOUR, heard=14 * HOUR) for n in range(30)
    ]
    failed_ours = {(NOW.date() - timedelta(days=n), "FAILED"): 4 for n in range(30)}
    known = Population(counts=failed_ours)
    result = plan(completed, now=NOW, rules=RULES, population=known, allowance=10)
    (query,) = result.queries
    assert (query.kind, query.status) == (Kind.RETURNS, "FAILED")
    assert query.estimate == 2  # 116 failed payouts in the window: two pages, for 30 payouts
    assert set(query.covers) == {t.key for t in completed}
    # From the oldest one's creation day (less the clock margin) to the newest one's.
    assert (query.from_date, query.to_date) == (date(2026, 10, 19), date(2026, 11, 17))


def test_one_due_payout_pulls_in_its_ripe_neighbours_and_refreshes_all_it_shows() -> None:
    due_one = payout("completed", entered=5 * DAY, heard=13 * HOUR)
    ripe = payout("completed", entered=6 * DAY, heard=7 * HOUR)  # past half of its 12 h
    fresh = payout("completed", entered=5 * DAY + 2 * HOUR, heard=HOUR)  # inside: told too
    far_unripe = payout("completed", entered=20 * DAY, heard=HOUR)  # outside: waits
    tracked = [due_one, ripe, fresh, far_unripe]
    result = plan(tracked, now=NOW, rules=RULES, population=Population(), allowance=10)
    (query,) = result.queries
    assert query.due == (due_one.key,)
    assert set(query.covers) == {due_one.key, ripe.key, fresh.key}


def test_payouts_created_far_apart_get_their_own_narrow_windows() -> None:
    a = payout("in_review", entered=3 * DAY, created=3 * DAY, heard=5 * HOUR)
    b = payout("in_review", entered=3 * DAY, created=3 * DAY + 2 * HOUR, heard=5 * HOUR)
    c = payout("in_review", entered=3 * DAY, created=12 * DAY, heard=5 * HOUR)
    d = payout("in_review", entered=3 * DAY, created=12 * DAY, heard=5 * HOUR)
    result = plan([a, b, c, d], now=NOW, rules=RULES, population=Population(), allowance=10)
    spans = sorted((q.from_date, q.to_date, set(q.covers)) for q in result.queries)
    assert len(spans) == 2
    (old_from, old_to, old), (new_from, new_to, new) = spans
    assert old == {c.key, d.key} and new == {a.key, b.key}
    assert (old_to - old_from).days <= 1 and (new_to - new_from).days <= 1
    assert old_to < new_from


def test_a_window_listing_also_tells_the_completed_payouts_it_shows() -> None:
    fresh = payout("processing", entered=20 * MIN)
    just_completed = payout("completed", entered=15 * MIN, created=25 * MIN, heard=13 * HOUR)
    result = plan(
        [fresh, just_completed], now=NOW, rules=RULES, population=Population(), allowance=9
    )
    assert [q.kind for q in result.queries] == [Kind.WINDOW]
    assert set(result.queries[0].covers) == {fresh.key, just_completed.key}


def test_a_listing_too_long_for_one_pass_is_split_by_payouts() -> None:
    completed = [
        payout("completed", entered=n * DAY + 14 * HOUR, heard=14 * HOUR) for n in range(30)
    ]
    failed_ours = {(NOW.date() - timedelta(days=n), "FAILED"): 100 for n in range(31)}
    rules = Rules(max_per_pass=10)
    result = plan(
        completed, now=NOW, rules=rules, population=Population(counts=failed_ours), allowance=100
    )
    assert len(result.queries) > 1
    assert all(q.estimate <= 10 for q in result.queries)
    covered = [key for q in result.queries for key in q.covers]
    assert set(covered) == {t.key for t in completed}


# --- Stragglers ------------------------------------------------------------------------------


def test_straggler_backoff_doubles_up_to_a_day() -> None:
    assert straggler_delay(0, RULES) == timedelta(0)
    assert [straggler_delay(n, RULES) for n in (1, 2, 3)] == [30 * MIN, HOUR, 2 * HOUR]
    assert straggler_delay(9, RULES) == DAY
    assert straggler_delay(400, RULES) == DAY


def test_an_id_never_listed_is_read_alone_and_only_after_its_backoff() -> None:
    # Moving for 20 minutes: its state says "every 10 minutes", its misses say "wait 2 hours".
    ghost = payout("processing", entered=20 * MIN, heard=15 * MIN, misses=3, missed=HOUR)
    other = payout("processing", entered=20 * MIN)
    result = plan([ghost, other], now=NOW, rules=RULES, population=Population(), allowance=10)
    assert ghost.key not in result.due
    assert all(ghost.key not in q.covers for q in result.queries)  # no listing waits for it
    later = NOW + 61 * MIN
    result = plan([ghost], now=later, rules=RULES, population=Population(), allowance=10)
    assert [(q.kind, q.upstream_id) for q in result.queries] == [(Kind.GET, ghost.upstream_id)]


# --- The budget refuses ----------------------------------------------------------------------


def test_nothing_fits_nothing_is_read_and_all_waits_in_order() -> None:
    older = payout("in_review", entered=3 * DAY, created=3 * DAY, heard=9 * HOUR)
    newer = payout("in_review", entered=3 * DAY, created=9 * DAY, heard=5 * HOUR)
    result = plan([newer, older], now=NOW, rules=RULES, population=Population(), allowance=0)
    assert result.queries == ()
    assert [q.due for q in result.deferred] == [(older.key,), (newer.key,)]
    assert result.due == {older.key, newer.key}


def test_what_waited_goes_first_when_the_budget_allows_again() -> None:
    waited = payout("in_review", entered=3 * DAY, created=9 * DAY, heard=30 * HOUR)
    just_due = payout("in_review", entered=3 * DAY, created=3 * DAY, heard=4 * HOUR + 30 * MIN)
    result = plan([just_due, waited], now=NOW, rules=RULES, population=Population(), allowance=1)
    assert [q.due for q in result.queries] == [(waited.key,)]


def test_estimates_use_what_listings_taught_about_other_payouts() -> None:
    known = Population(
        counts={(date(2026, 11, 18), "FAILED"): 3, (date(2026, 11, 17), "COMPLETED"): 5},
        others_per_day={"FAILED": 40.0, "COMPLETED": 100.0},
    )
    day = date(2026, 11, 18)
    assert known.estimate("FAILED", day, day) == 43
    assert known.estimate(None, day - timedelta(days=1), day) == 8 + 280


# --- When to look again ------------------------------------------------------------------------


def test_the_next_look_is_the_soonest_due_time_or_one_cadence_after_a_read() -> None:
    quiet = payout("completed", entered=3 * DAY, heard=2 * HOUR)  # due in 10 to 11.2 hours
    read_now = payout("in_review", entered=3 * DAY, heard=5 * HOUR)  # due now: 4 h once read
    tracked = [quiet, read_now]
    look = next_look(tracked, now=NOW, rules=RULES, all_read=True)
    assert look == NOW + HOUR  # never more than an hour on
    look = next_look([quiet], now=NOW, rules=RULES, all_read=True)
    quiet_timing = timing(quiet, now=NOW, rules=RULES)
    assert quiet_timing is not None
    assert look == min(NOW + HOUR, quiet_timing.due_at)
    soon = payout("processing", entered=20 * MIN, heard=5 * MIN)  # every 10 minutes
    assert next_look([quiet, soon], now=NOW, rules=RULES, all_read=True) < NOW + 6 * MIN


def test_work_left_over_means_looking_again_at_once() -> None:
    quiet = payout("completed", entered=3 * DAY, heard=2 * HOUR)
    assert next_look([quiet], now=NOW, rules=RULES, all_read=False) == NOW
