"""The embedded task broker: a queued task wakes the pusher instead of waiting for its poll."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import transaction
from django_q.brokers import get_broker
from django_q.conf import Conf
from django_q.tasks import async_task, result

from console.task_broker import Listener, WakingOrmBroker, wake, wake_directory
from tests.workers import qcluster

# Far longer than any test waits: a task found within a test's bounds was found by a wake-up.
NEVER = 600.0


@pytest.fixture
def queue() -> Iterator[str]:
    yield f"test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def listener(queue: str, db: None) -> Iterator[Listener]:
    held = Listener(queue)
    yield held
    held.close()


def test_the_embedded_default_uses_the_waking_broker_and_redis_its_own(db: None) -> None:
    broker = get_broker()
    if settings.REDIS_URL:
        assert not isinstance(broker, WakingOrmBroker)
    else:
        assert isinstance(broker, WakingOrmBroker)


def test_a_wake_up_reaches_every_listener_of_its_queue_only(queue: str, listener: Listener) -> None:
    other = Listener(f"{queue}-other")
    try:
        assert wake(queue) == 1
        assert listener.wait(0) is True
        assert other.wait(0) is False
        assert listener.wait(0) is False  # taken: one wake-up, one look
    finally:
        other.close()


def test_a_listener_left_by_a_dead_pusher_is_tidied_and_not_counted(
    queue: str, listener: Listener, db: None
) -> None:
    stale = wake_directory(queue) / "999999999.sock"
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    leftover.bind(str(stale))
    leftover.close()  # its file stays, nobody reads it: as after a crash
    assert stale.exists()

    assert wake(queue) == 1
    assert not stale.exists()


def test_a_task_queued_inside_a_transaction_wakes_only_once_committed(
    queue: str, listener: Listener, transactional_db: None
) -> None:
    broker = WakingOrmBroker(list_key=queue)
    with transaction.atomic():
        broker.enqueue("payload")
        assert listener.wait(0) is False  # the pusher could not see the row yet
    assert listener.wait(0) is True


def test_a_waiting_pusher_is_woken_by_a_queued_task(
    queue: str, transactional_db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Conf, "POLL", NEVER)
    pusher = WakingOrmBroker(list_key=queue)
    producer = WakingOrmBroker(list_key=queue)
    found: list[object] = []

    def pushing() -> None:
        # As django-q2's pusher loops: an empty look waits for a wake-up (or NEVER). Bounded:
        # the probes below and the task's own wake-up cause at most three looks.
        for _ in range(5):
            found.append(pusher.dequeue())
            if found[-1]:
                return

    thread = threading.Thread(target=pushing, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while wake(queue) == 0:  # the pusher listens (these early wake-ups are harmless)
        assert time.monotonic() < deadline, "the pusher never listened"
        time.sleep(0.01)
    producer.enqueue("the payload")
    thread.join(timeout=60)

    assert not thread.is_alive(), "the pusher slept through the wake-up"
    claimed = [item for item in found if item]
    assert [payload for _, payload in claimed[0]] == ["the payload"]  # type: ignore[index]


def test_a_real_qcluster_runs_a_task_at_once_though_its_poll_is_ten_minutes(
    transactional_db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = f"wake-{uuid.uuid4().hex[:8]}"
    # Its own cluster, so no other test's worker takes the task; tasks are signed with the name.
    monkeypatch.setattr(Conf, "PREFIX", cluster)
    monkeypatch.setattr(Conf, "CLUSTER_NAME", cluster)
    with qcluster(cluster, env={"PAYOPS_Q_POLL": str(NEVER)}) as worker:
        deadline = time.monotonic() + 60
        # (With Redis the broker blocks on its list and never polls: nothing to wait for.)
        while not settings.REDIS_URL and wake(cluster) == 0:
            assert worker.poll() is None, "qcluster exited early"
            assert time.monotonic() < deadline, "the cluster's pusher never listened"
            time.sleep(0.1)
        task_id = async_task("math.floor", 2.5)
        assert result(task_id, wait=60_000) == 2
