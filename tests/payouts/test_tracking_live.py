"""Tracking against the emulator over HTTP: the sandbox cents outcomes reach their final states."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from gateway.client import call_sync, upstream
from payouts.models import ChangeSource, Payout, PayoutEvent, PayoutStatus
from payouts.tracking.events import payout_apply_event
from payouts.tracking.polling.run import payouts_poll
from staff.models import AuditEntry, StaffUser
from tests.payouts.live import World, initiated
from tests.servers import serve_in_thread

S = PayoutStatus


class Collector:
    """A webhook receiver that keeps every delivered body (signature checks are the wh app's)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if scope["path"] == "/hook" and body:
            self.bodies.append(json.loads(body))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


@pytest.fixture
def hooks(world: World) -> Iterator[Collector]:
    collector = Collector()
    with serve_in_thread(collector, lifespan="off") as url:
        call_sync(
            upstream(world.environment).webhooks.register,
            webhook_url=f"{url}/hook",
            secret="test-webhook-secret",
            client_uuid=world.environment.client_id,
        )
        yield collector


def payout_events(world: World, hooks: Collector, payout: Payout) -> list[dict[str, Any]]:
    world.tick(times=4)
    world.emulator.control("POST", "webhooks/flush")

    def names(body: dict[str, Any]) -> str:
        data = body["data"]
        return str(data.get("payout_id") or (data.get("data") or {}).get("payout_id") or "")

    return [
        b
        for b in hooks.bodies
        if b["event"].startswith("payout.") and names(b) == payout.upstream_id
    ]


def apply_all(world: World, events: list[dict[str, Any]]) -> Payout | None:
    result = None
    for body in events:
        result = payout_apply_event(
            environment=world.environment, event_type=body["event"], data=body["data"]
        )
    return result


@pytest.mark.parametrize(
    ("amount", "final", "passes_through"),
    [
        ("100.02", S.COMPLETED, S.IN_REVIEW),
        ("100.03", S.FAILED, S.IN_REVIEW),
        ("100.04", S.RETURNED, S.COMPLETED),
        ("100.00", S.COMPLETED, S.PROCESSING),
    ],
)
def test_sandbox_outcomes_tracked_in_order_to_their_final_state(
    world: World,
    staff: dict[str, StaffUser],
    hooks: Collector,
    amount: str,
    final: str,
    passes_through: str,
) -> None:
    payout = initiated(world, staff, amount)
    events = payout_events(world, hooks, payout)
    assert any(e["event"] == "payout.status_changed" for e in events)  # the nested shape
    apply_all(world, events)
    payout.refresh_from_db()
    assert payout.status == final
    moved_through = list(payout.status_changes.values_list("to_status", flat=True))
    assert passes_through in moved_through
    assert payout.status_changes.filter(source=ChangeSource.EVENT).exists()


@pytest.mark.parametrize(
    ("amount", "final"),
    [("100.02", S.COMPLETED), ("100.03", S.FAILED), ("100.04", S.RETURNED)],
)
def test_sandbox_outcomes_reach_the_same_final_state_out_of_order_and_twice(
    world: World, staff: dict[str, StaffUser], hooks: Collector, amount: str, final: str
) -> None:
    payout = initiated(world, staff, amount)
    events = payout_events(world, hooks, payout)
    apply_all(world, list(reversed(events)) + events)  # newest first, then all again
    payout.refresh_from_db()
    assert payout.status == final
    # Each event is recorded once, however often it came.
    assert PayoutEvent.objects.filter(payout=payout).count() == len(events)


def test_completed_can_still_become_returned(
    world: World, staff: dict[str, StaffUser], hooks: Collector
) -> None:
    payout = initiated(world, staff, "100.04")
    events = payout_events(world, hooks, payout)
    until_completed = [e for e in events if e["event"] != "payout.returned"]
    until_completed = [
        e for e in until_completed if (e["data"].get("data") or {}).get("status") != "FAILED"
    ]
    apply_all(world, until_completed)
    payout.refresh_from_db()
    assert payout.status == S.COMPLETED
    apply_all(world, events)
    payout.refresh_from_db()
    assert payout.status == S.RETURNED
    assert payout.notifications.filter(kind="returned", recipient=payout.maker).exists()


def test_polling_finds_what_no_event_told_and_reports_a_missed_event(
    world: World, staff: dict[str, StaffUser], settings: Any
) -> None:
    settings.PAYOUTS_POLL_AFTER_SECONDS = -1
    payout = initiated(world, staff, "100.02")
    world.tick(times=4)
    assert payouts_poll() == 1
    payout.refresh_from_db()
    assert payout.status == S.COMPLETED
    assert payout.status_changes.filter(source=ChangeSource.POLL).exists()
    assert AuditEntry.objects.filter(
        action="payout.missed_event", target_id=str(payout.pk)
    ).exists()
    from webhooks.models import MissedEvent

    gap = MissedEvent.objects.get(upstream_id=payout.upstream_id)
    assert (gap.object_kind, gap.observed_state) == ("payout", "COMPLETED")
    calls = [r for r in world.emulator.witness.api_requests() if r["path"].endswith("/v1/payouts")]
    assert calls and all(r["method"] == "GET" for r in calls)
    assert payouts_poll() == 0  # final now: nothing more to learn
