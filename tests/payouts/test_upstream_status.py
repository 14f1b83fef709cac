"""Every shape of the upstream's payout status reads as one normalised report."""

from __future__ import annotations

import pytest

from payouts.tracking.upstream_status import UnreadableStatus, upstream_status

PID = "5b0a4c1e-51c9-4b8a-9a39-2f1b9a4d7a10"


def test_initiation_answer_lowercase_created_in_its_envelope() -> None:
    report = upstream_status({"data": {"id": PID, "status": "created", "amount": "10.00"}})
    assert (report.upstream_id, report.status) == (PID, "created")


def test_get_answer_uppercase_bare_object() -> None:
    report = upstream_status(
        {"payout_id": PID, "status": "IN_REVIEW", "updated_at": "2026-11-21T10:15:30.123Z"}
    )
    assert report.status == "in_review" and report.at is not None


def test_flat_event_with_reason() -> None:
    report = upstream_status(
        {"event_id": "evt_1", "payout_id": PID, "status": "FAILED", "reason": "rejected_in_review"},
        event_type="payout.failed",
    )
    assert (report.status, report.reason) == ("failed", "rejected_in_review")


def test_status_changed_nested_shape_with_previous_status() -> None:
    report = upstream_status(
        {
            "event_id": "evt_2",
            "event_type": "payout.status_changed",
            "created_at": "2026-05-28 00:52:49.879228+00",
            "data": {"payout_id": PID, "status": "PROCESSING", "previous_status": "PENDING"},
        },
        event_type="payout.status_changed",
    )
    assert (report.status, report.previous) == ("processing", "pending")
    assert report.at is not None and report.at.tzinfo is not None


def test_a_return_reads_as_returned_in_every_shape() -> None:
    nested = {"data": {"payout_id": PID, "status": "FAILED", "previous_status": "COMPLETED"}}
    assert upstream_status(nested, event_type="payout.status_changed").status == "returned"
    flat = {"payout_id": PID, "status": "FAILED", "reason": "returned"}
    assert upstream_status(flat, event_type="payout.returned").status == "returned"
    got = {
        "payout_id": PID,
        "status": "FAILED",
        "events": [{"status": "PROCESSING"}, {"status": "COMPLETED"}, {"status": "FAILED"}],
    }
    assert upstream_status(got).status == "returned"


def test_failed_from_review_is_failed_not_returned() -> None:
    got = {
        "payout_id": PID,
        "status": "FAILED",
        "events": [{"status": "IN_REVIEW"}, {"status": "FAILED"}],
    }
    assert upstream_status(got).status == "failed"


def test_american_spelling_of_cancelled() -> None:
    assert upstream_status({"payout_id": PID, "status": "canceled"}).status == "cancelled"


@pytest.mark.parametrize(
    "payload", [{"status": "PENDING"}, {"payout_id": PID}, {"payout_id": PID, "status": "LOST"}]
)
def test_unreadable_payloads_are_refused_never_guessed(payload: dict[str, str]) -> None:
    with pytest.raises(UnreadableStatus):
        upstream_status(payload)


def test_the_upstreams_own_times_of_the_move_and_of_the_payout() -> None:
    """The ledger's dates (docs/books.md, "Dating the ledger"): when the upstream made the move
    and when it made the payout, from every shape that says; none from one that does not."""
    from datetime import UTC, datetime

    got = upstream_status(
        {
            "payout_id": PID,
            "status": "FAILED",
            "events": [
                {"status": "CREATED", "at": "2026-11-20T09:00:00.000Z"},
                {"status": "COMPLETED", "at": "2026-11-20T09:00:15.000Z"},
                {"status": "FAILED", "at": "2026-11-21T08:30:00.000Z"},
            ],
            "created_at": "2026-11-20T09:00:00.000Z",
            "updated_at": "2026-11-21T08:30:00.000Z",
        }
    )
    assert got.status == "returned"
    assert got.moved_at == datetime(2026, 11, 21, 8, 30, tzinfo=UTC)
    assert got.created_at == datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

    changed = upstream_status(
        {
            "event_type": "payout.status_changed",
            "created_at": "2026-11-21T08:30:00.000Z",
            "data": {"payout_id": PID, "status": "FAILED", "previous_status": "COMPLETED"},
        }
    )
    assert changed.moved_at == datetime(2026, 11, 21, 8, 30, tzinfo=UTC)
    assert changed.created_at is None  # the envelope's time is the event's, not the payout's

    flat = upstream_status(
        {"payout_id": PID, "status": "FAILED", "created_at": "2026-11-20T09:00:00.000Z"},
        event_type="payout.returned",
    )
    assert flat.moved_at is None  # the payout's creation, not the return's time
    assert flat.created_at == datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

    answer = upstream_status({"data": {"id": PID, "status": "created"}})
    assert (answer.moved_at, answer.created_at) == (None, None)  # the 201 says no time
