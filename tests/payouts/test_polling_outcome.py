"""What a read told (pure), the straggler bookkeeping, and the pass's allowance."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from payouts.tracking.polling.budget import Budget, allowance
from payouts.tracking.polling.due import Tracked
from payouts.tracking.polling.outcome import after_get, resolve
from payouts.tracking.polling.plan import Kind, Query

NOW = datetime(2026, 11, 18, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def tracked(key: int, status: str, *, misses: int = 0) -> Tracked:
    return Tracked(
        key=key,
        upstream_id=f"po-{key}",
        status=status,
        entered_at=NOW - HOUR,
        created_from=NOW - HOUR,
        created_until=NOW - HOUR,
        misses=misses,
        missed_at=NOW - HOUR if misses else None,
    )


OPEN = {
    t.key: t for t in (tracked(1, "processing"), tracked(2, "processing"), tracked(3, "pending"))
}
COMPLETED = {t.key: t for t in (tracked(4, "completed"), tracked(5, "completed"))}


def query(kind: Kind, covers: tuple[int, ...]) -> Query:
    return Query(kind=kind, covers=covers, due=covers, estimate=1)


# --- resolve ----------------------------------------------------------------------------------


def test_a_complete_status_listing_settles_what_it_shows_and_misses_the_rest() -> None:
    outcome = resolve(
        query(Kind.STATUS, (1, 2)),
        seen={"po-1": "processing", "po-3": "processing", "someone-else": "processing"},
        tracked=OPEN,
        complete=True,
    )
    assert outcome.confirmed == {1}
    assert outcome.changed == {3: "processing"}  # shown though not covered: settled too
    assert outcome.missing == {2}


def test_an_incomplete_listing_concludes_nothing_about_what_it_did_not_show() -> None:
    outcome = resolve(
        query(Kind.WINDOW, (1, 2, 3)), seen={"po-1": "completed"}, tracked=OPEN, complete=False
    )
    assert outcome.changed == {1: "completed"}
    assert outcome.confirmed == frozenset() and outcome.missing == frozenset()


def test_a_complete_returns_listing_confirms_the_completed_payouts_it_does_not_show() -> None:
    outcome = resolve(
        query(Kind.RETURNS, (4, 5)), seen={"po-5": "returned"}, tracked=COMPLETED, complete=True
    )
    assert outcome.changed == {5: "returned"}
    assert outcome.confirmed == {4}
    assert outcome.missing == frozenset()


def test_an_unanswered_get_is_missing() -> None:
    outcome = resolve(query(Kind.GET, (1,)), seen={}, tracked=OPEN, complete=True)
    assert outcome.missing == {1}


# --- after_get: the straggler bookkeeping ------------------------------------------------------


def test_not_found_counts_one_more_miss_from_now() -> None:
    assert after_get(tracked(1, "processing"), None, now=NOW, listing_missed=True) == (1, NOW)
    ghost = tracked(1, "processing", misses=3)
    assert after_get(ghost, None, now=NOW, listing_missed=False) == (4, NOW)


def test_moved_means_it_was_only_moving() -> None:
    ghost = tracked(1, "processing", misses=3)
    assert after_get(ghost, "completed", now=NOW, listing_missed=False) == (0, None)


def test_unchanged_after_a_listing_missed_it_is_a_straggler() -> None:
    assert after_get(tracked(1, "processing"), "processing", now=NOW, listing_missed=True) == (
        1,
        NOW,
    )
    # A lonely payout read by GET because that was cheapest is not a straggler.
    assert after_get(tracked(1, "processing"), "processing", now=NOW, listing_missed=False) == (
        0,
        None,
    )
    # A known straggler read again keeps its count and its backoff's start.
    ghost = tracked(1, "processing", misses=2)
    assert after_get(ghost, "processing", now=NOW, listing_missed=False) == (2, NOW - HOUR)


# --- allowance ---------------------------------------------------------------------------------


def budget(**changes: object) -> Budget:
    fields: dict[str, object] = {
        "weekly_budget": 10_000,
        "background_share": 0.5,
        "polling_share": 0.08,
        "spent_last_hour": 0,
        "spent_last_day": 0,
        "background_this_week": 0,
        "week_left": timedelta(days=4),
        "max_per_pass": 10,
    }
    fields.update(changes)
    return Budget(**fields)  # type: ignore[arg-type]


def test_a_quiet_hour_allows_a_full_pass_and_the_pace_caps_the_hour() -> None:
    # 8 % of 10,000 a week is about 4.8 calls an hour; a pass may burst to twice that.
    assert allowance(budget()) == 9
    assert allowance(budget(spent_last_hour=5)) == 4
    assert allowance(budget(spent_last_hour=10)) == 0


def test_the_day_caps_the_average() -> None:
    assert allowance(budget(spent_last_day=110)) == 4  # 114.3 a day
    assert allowance(budget(spent_last_day=200)) == 0


def test_a_pass_never_exceeds_its_maximum() -> None:
    assert allowance(budget(polling_share=1.0, max_per_pass=3)) == 3


@pytest.mark.parametrize(
    ("used", "left", "expected"),
    [
        (4_990, timedelta(days=3), 3),  # 10 calls for 72 hours: about 3 a day
        (4_900, timedelta(days=1), 9),  # 100 for a day: polling's own pace still fits
        (4_990, timedelta(hours=2), 9),  # 10 for 2 hours
        (5_000, timedelta(days=1), 0),  # the share is spent
    ],
)
def test_what_is_left_of_the_background_share_is_spread_over_the_week(
    used: int, left: timedelta, expected: int
) -> None:
    assert allowance(budget(background_this_week=used, week_left=left)) == expected


def test_slower_not_stopped_when_other_background_work_ate_most_of_the_share() -> None:
    # 300 calls left with 3 days to go: 100 a day, so polling may still spend today's pace.
    assert allowance(budget(background_this_week=4_700, week_left=timedelta(days=3))) == 9
    spent = budget(background_this_week=4_700, week_left=timedelta(days=3), spent_last_day=95)
    assert allowance(spent) == 5
    # 10 left for 3 days, 3 spent today: nothing more today, but not nothing for the week.
    assert allowance(budget(background_this_week=4_990, week_left=timedelta(days=3))) == 3
    assert (
        allowance(budget(background_this_week=4_990, week_left=timedelta(days=3), spent_last_day=3))
        == 0
    )
