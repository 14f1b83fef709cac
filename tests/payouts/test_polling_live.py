"""Polling against the emulator over HTTP, on a clock the test moves (ours and the emulator's)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from gateway.models import UpstreamCall
from payouts.models import ChangeSource, Payout, PayoutEvent, PayoutStatus
from payouts.tracking.polling.run import payouts_poll
from staff.models import StaffUser
from tests.payouts.live import World, initiated

S = PayoutStatus


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch, world: World) -> Callable[[timedelta], None]:
    """Move time forward for PayOps (django.utils.timezone.now) and the emulator together."""
    real_now = timezone.now
    offset = [timedelta(0)]
    monkeypatch.setattr(timezone, "now", lambda: real_now() + offset[0])

    def advance(delta: timedelta) -> None:
        offset[0] += delta
        world.emulator.advance(delta.total_seconds())

    return advance


def poll_reads(world: World) -> dict[str, int]:
    """The payout reads the emulator answered, by kind (counted outside our code)."""
    reads = {"list": 0, "get": 0}
    for request in world.emulator.witness.api_requests():
        path = request["path"]
        if path.endswith("/v1/payouts"):
            reads["list"] += 1
        elif "/v1/payouts/" in path:
            reads["get"] += 1
    return reads


def upstream_status_of(world: World, payout: Payout) -> str:
    return next(
        p["status"] for p in world.payouts_upstream() if p["payout_id"] == payout.upstream_id
    )


def test_a_completed_payout_returned_later_is_caught_by_polling_without_a_webhook(
    world: World, staff: dict[str, StaffUser], settings: Any, later: Callable[[timedelta], None]
) -> None:
    settings.PAYOUTS_POLL_AFTER_SECONDS = -1
    payout = initiated(world, staff, "100.04")  # sandbox: completes, then is returned
    world.tick(times=3)
    assert upstream_status_of(world, payout) == "COMPLETED"
    payouts_poll()
    payout.refresh_from_db()
    assert payout.status == S.COMPLETED
    world.tick()
    assert upstream_status_of(world, payout) == "FAILED"  # the return, as the upstream shows it

    # Completed just now: the return sweep is not due yet, and nothing is read for it.
    world.emulator.witness.clear()
    assert payouts_poll() == 0
    assert poll_reads(world) == {"list": 0, "get": 0}

    later(timedelta(hours=14))  # past the twice-daily sweep (12 h, up to 10 % jitter)
    assert payouts_poll() == 1
    payout.refresh_from_db()
    assert payout.status == S.RETURNED
    assert payout.status_changes.filter(to_status=S.RETURNED, source=ChangeSource.POLL).exists()
    assert poll_reads(world) == {"list": 1, "get": 0}
    listing = UpstreamCall.objects.filter(operation="payout_list").latest("pk")
    assert listing.priority == "background"
    from webhooks.models import MissedEvent

    gap = MissedEvent.objects.get(upstream_id=payout.upstream_id, observed_state="FAILED")
    assert gap.object_kind == "payout"


def ghost_payout(world: World, staff: dict[str, StaffUser]) -> Payout:
    """A payout in `processing` whose upstream id the upstream neither lists nor knows."""
    payout = initiated(world, staff, "100.00")
    Payout.objects.filter(pk=payout.pk).update(
        upstream_id=str(uuid.uuid4()), status=S.PROCESSING, updated_at=timezone.now()
    )
    return Payout.objects.get(pk=payout.pk)


def test_an_id_never_listed_does_not_cost_a_full_pass_each_run(
    world: World, staff: dict[str, StaffUser], settings: Any, later: Callable[[timedelta], None]
) -> None:
    settings.PAYOUTS_POLL_AFTER_SECONDS = -1  # due at every run by its state
    ghost = ghost_payout(world, staff)
    world.emulator.witness.clear()
    for _ in range(5):
        payouts_poll()
    # One listing that should have shown it, one GET that found nothing; then it waits.
    assert poll_reads(world) == {"list": 1, "get": 1}
    ghost.refresh_from_db()
    assert ghost.poll_misses == 1
    assert ghost.status == S.PROCESSING

    later(timedelta(minutes=31))  # its first backoff is over: read by itself, never listed
    for _ in range(3):
        payouts_poll()
    assert poll_reads(world) == {"list": 1, "get": 2}
    ghost.refresh_from_db()
    assert ghost.poll_misses == 2

    later(timedelta(minutes=31))  # the second backoff is an hour: not yet
    payouts_poll()
    assert poll_reads(world) == {"list": 1, "get": 2}


def test_an_event_received_recently_counts_as_news(
    world: World, staff: dict[str, StaffUser], later: Callable[[timedelta], None]
) -> None:
    payout = initiated(world, staff, "100.00")
    later(timedelta(hours=2))  # in `created` for two hours: due every 30 minutes
    PayoutEvent.objects.create(
        environment=world.environment,
        payout=payout,
        upstream_id=payout.upstream_id,
        event_id="evt_recent",
        event_type="payout.status_changed",
        source=ChangeSource.EVENT,
        status=S.CREATED,
        received_at=timezone.now() - timedelta(minutes=5),
    )
    world.emulator.witness.clear()
    assert payouts_poll() == 0
    assert poll_reads(world) == {"list": 0, "get": 0}

    # Its cadence (30 minutes, up to 10 % jitter) counts from the event: then it is read again.
    later(timedelta(minutes=30))
    world.tick(times=4)
    assert payouts_poll() == 1
    assert poll_reads(world)["list"] == 1


def test_a_refusing_budget_slows_polling_down_and_it_resumes_oldest_first(
    world: World, staff: dict[str, StaffUser], settings: Any
) -> None:
    settings.PAYOUTS_POLL_AFTER_SECONDS = -1
    payout = initiated(world, staff, "100.00")
    world.tick(times=4)
    world.environment.background_share = 0  # no background call may be made
    world.environment.save(update_fields=["background_share"])
    world.emulator.witness.clear()
    assert payouts_poll() == 0
    assert poll_reads(world) == {"list": 0, "get": 0}
    payout.refresh_from_db()
    assert (payout.status, payout.last_polled_at) == (S.CREATED, None)  # nothing claimed read

    world.environment.background_share = 0.5
    world.environment.save(update_fields=["background_share"])
    assert payouts_poll() == 1
    payout.refresh_from_db()
    assert payout.status == S.COMPLETED and payout.last_polled_at is not None
