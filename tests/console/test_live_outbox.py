"""The embedded default's channel layer: messages from other processes reach connected pages.

Other processes are real ones (`tests.console.child_live`), using this test's database.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.broadcast import broadcast_event, broadcast_event_on_commit
from console.live.layer import OutboxChannelLayer
from console.models import LiveMessage
from console.tasks import live_messages_prune
from tests.console.child_live import environment as child_environment
from tests.console.test_consumers import _connect
from tests.servers import CONNECT_WAIT

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("outbox_layer")]


def _layer() -> OutboxChannelLayer:
    layer = get_channel_layer()
    assert isinstance(layer, OutboxChannelLayer), "the embedded default's layer is configured"
    return layer


def _child(*args: str) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "tests.console.child_live", *args],
        cwd=settings.BASE_DIR,
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]


async def _other_process(*args: str) -> None:
    await sync_to_async(_child, thread_sensitive=False)(*args)


async def _connected(user: Any) -> WebsocketCommunicator:
    communicator = await _connect(user)
    connected, _ = await communicator.connect(timeout=CONNECT_WAIT)
    assert connected
    return communicator


async def test_a_message_committed_by_another_process_reaches_a_connected_page(maker) -> None:
    communicator = await _connected(maker)

    await _other_process("commit", "from.the.worker")

    message = await communicator.receive_json_from(timeout=20)
    assert message["kind"] == "from.the.worker"
    assert message["payload"]["pid"] != __import__("os").getpid()
    await communicator.disconnect()


async def test_a_rolled_back_transaction_sends_nothing_to_any_process(maker) -> None:
    communicator = await _connected(maker)

    await _other_process("rollback", "rolled.back")
    await _other_process("commit", "committed.after")

    # Delivered in the order written: had the rolled-back one been sent, it would come first.
    assert (await communicator.receive_json_from(timeout=20))["kind"] == "committed.after"
    assert not await sync_to_async(LiveMessage.objects.filter(message__kind="rolled.back").exists)()
    await communicator.disconnect()


async def test_a_message_sent_here_is_delivered_once_not_again_by_the_poller(maker) -> None:
    communicator = await _connected(maker)

    await sync_to_async(broadcast_event)("from.this.process", {"n": 1})
    assert (await communicator.receive_json_from(timeout=10))["kind"] == "from.this.process"
    await _other_process("commit", "from.elsewhere")

    # The poller reads in id order: a second copy of ours would arrive before the other one.
    assert (await communicator.receive_json_from(timeout=20))["kind"] == "from.elsewhere"
    await communicator.disconnect()


async def test_a_page_that_connects_later_is_not_replayed_old_messages(maker) -> None:
    await _other_process("commit", "before.anyone.listened")
    communicator = await _connected(maker)

    await _other_process("commit", "after.connecting")

    assert (await communicator.receive_json_from(timeout=20))["kind"] == "after.connecting"
    await communicator.disconnect()


async def test_the_poller_runs_only_while_a_page_listens(maker) -> None:
    layer = _layer()
    assert not layer.poller_running()

    first = await _connected(maker)
    second = await _connected(maker)
    assert layer.poller_running()
    await first.disconnect()
    assert layer.poller_running()  # the second page still listens
    await second.disconnect()

    assert not layer.poller_running()
    assert not layer.listening()


async def test_the_same_message_twice_in_one_transaction_is_written_and_sent_once(maker) -> None:
    communicator = await _connected(maker)

    def change_twice() -> None:
        with transaction.atomic():
            broadcast_event_on_commit("payout.changed", {"payout_id": 1}, roles=["finance_maker"])
            broadcast_event_on_commit("payout.changed", {"payout_id": 1}, roles=["finance_maker"])
            broadcast_event_on_commit("payout.changed", {"payout_id": 2}, roles=["finance_maker"])

    await sync_to_async(change_twice)()

    assert (await communicator.receive_json_from(timeout=10))["payload"] == {"payout_id": 1}
    assert (await communicator.receive_json_from(timeout=10))["payload"] == {"payout_id": 2}
    assert await sync_to_async(LiveMessage.objects.count)() == 2
    await communicator.disconnect()


def test_a_message_is_written_in_the_senders_transaction() -> None:
    with transaction.atomic():
        broadcast_event_on_commit("kept", {})
        assert LiveMessage.objects.filter(message__kind="kept").exists()
    with pytest.raises(RuntimeError), transaction.atomic():
        broadcast_event_on_commit("dropped", {})
        raise RuntimeError("rolled back")

    assert list(LiveMessage.objects.values_list("message__kind", flat=True)) == ["kept"]


def test_pruning_deletes_only_the_messages_older_than_the_keep_time() -> None:
    keep = timedelta(seconds=settings.PAYOPS_LIVE_KEEP_SECONDS)
    now = timezone.now()
    for age in (keep * 3, keep + timedelta(seconds=5), keep - timedelta(seconds=30), timedelta(0)):
        LiveMessage.objects.create(
            group="staff.events", message={}, origin="t", created_at=now - age
        )

    assert live_messages_prune() == 2
    assert LiveMessage.objects.count() == 2
    assert all(row.created_at > now - keep for row in LiveMessage.objects.all())


def test_pruning_is_a_registered_schedule() -> None:
    from console.schedules import SCHEDULES

    assert SCHEDULES["console.live_prune"].func == "console.tasks.live_messages_prune"


@pytest.mark.postgres
async def test_a_message_committed_after_a_newer_one_is_still_delivered(maker) -> None:
    """On PostgreSQL ids can commit out of order: the older id, committed last, still arrives."""
    communicator = await _connected(maker)
    holder = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "tests.console.child_live", "hold", "older.id.committed.last"],
        cwd=settings.BASE_DIR,
        env=child_environment(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        line = await asyncio.wait_for(holder.stdout.readline(), timeout=60)
        assert line.strip() == b"written"
        await _other_process("commit", "newer.id.committed.first")
        assert (await communicator.receive_json_from(timeout=20))["kind"] == (
            "newer.id.committed.first"
        )
        holder.stdin.write(b"commit\n")
        await holder.stdin.drain()
        assert await asyncio.wait_for(holder.wait(), timeout=60) == 0
    finally:
        if holder.returncode is None:
            holder.kill()

    assert (await communicator.receive_json_from(timeout=20))["kind"] == "older.id.committed.last"
    await communicator.disconnect()
