"""The live outbox cursor: where a web process has read up to, and which ids it still awaits."""

from __future__ import annotations

from console.live.cursor import GAP_WAIT, MAX_GAPS, Cursor, cursor_advance, cursor_start


def test_reading_in_order_moves_the_cursor_and_awaits_nothing() -> None:
    cursor = cursor_advance(Cursor(last_id=4), read_ids=[5, 6, 7], now=100.0)

    assert cursor == Cursor(last_id=7, gaps={})


def test_an_id_jumped_over_is_awaited_until_it_shows_up() -> None:
    cursor = cursor_advance(Cursor(last_id=9), read_ids=[11], now=100.0)
    assert cursor.last_id == 11
    assert cursor.gaps == {10: 100.0 + GAP_WAIT}

    still = cursor_advance(cursor, read_ids=[], now=101.0)
    assert still.gaps == {10: 100.0 + GAP_WAIT}

    arrived = cursor_advance(still, read_ids=[10, 12], now=102.0)
    assert arrived == Cursor(last_id=12, gaps={})


def test_an_id_that_never_shows_up_is_given_up_after_the_wait() -> None:
    cursor = cursor_advance(Cursor(last_id=9), read_ids=[11], now=100.0)

    assert cursor_advance(cursor, read_ids=[], now=100.0 + GAP_WAIT + 1).gaps == {}


def test_nothing_read_leaves_the_cursor_where_it_was() -> None:
    assert cursor_advance(Cursor(last_id=3), read_ids=[], now=1.0) == Cursor(last_id=3)


def test_the_awaited_ids_are_bounded_to_the_newest() -> None:
    cursor = cursor_advance(Cursor(last_id=0), read_ids=[10_000], now=0.0)

    assert len(cursor.gaps) == MAX_GAPS
    assert min(cursor.gaps) == 10_000 - MAX_GAPS


def test_a_start_replays_nothing_and_awaits_recent_ids_not_yet_visible() -> None:
    # Rows up to 20 are older than the wait; 21, 23 and 24 are recent; 22 is not visible yet.
    cursor = cursor_start(newest_id=24, settled_id=20, recent_ids=[21, 23, 24], now=50.0)

    assert cursor.last_id == 24
    assert cursor.gaps == {22: 50.0 + GAP_WAIT}


def test_a_start_on_an_empty_outbox_begins_at_zero() -> None:
    assert cursor_start(newest_id=0, settled_id=0, recent_ids=[], now=0.0) == Cursor()
