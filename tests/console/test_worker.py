"""A real qcluster, started the way `make run` starts it: beats as it starts, then on schedule."""

from __future__ import annotations

import os
import subprocess
import time
from io import StringIO

import pytest
from django.core.management import call_command
from django_q.models import Schedule, Task
from django_q.signals import post_spawn

from console.models import WorkerHeartbeat
from tests.workers import qcluster


def _wait_for_heartbeat(worker: subprocess.Popen[bytes], cluster: str, within: float) -> None:
    deadline = time.monotonic() + within
    while not WorkerHeartbeat.objects.filter(cluster=cluster).exists():
        assert worker.poll() is None, "qcluster exited early"
        assert time.monotonic() < deadline, "no heartbeat from the worker"
        time.sleep(0.5)


def test_a_worker_process_beats_when_it_is_spawned(db: None, settings) -> None:  # type: ignore[no-untyped-def]
    post_spawn.send(sender="django_q", proc_name="Process-1")

    beat = WorkerHeartbeat.objects.get()
    assert beat.cluster == settings.Q_CLUSTER["name"]


@pytest.mark.django_db(transaction=True)
def test_a_starting_qcluster_beats_before_any_schedule_runs() -> None:
    cluster = f"start-test-{os.getpid()}"
    Schedule.objects.all().delete()  # no heartbeat schedule: only the start-up beat can write it
    with qcluster(cluster, capture=True) as worker:
        # Generous for a loaded machine; the beat comes as soon as a worker process is up.
        _wait_for_heartbeat(worker, cluster, within=90)
    assert not Schedule.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_running_qcluster_runs_the_heartbeat_schedule() -> None:
    cluster = f"ops-test-{os.getpid()}"
    call_command("sync_schedules", stdout=StringIO())
    assert Schedule.objects.filter(name="payops:console.heartbeat").exists()
    with qcluster(cluster, capture=True) as worker:
        # The scheduler looks for due schedules about every 30 s; allow a few rounds.
        deadline = time.monotonic() + 150
        while not Task.objects.filter(func="console.tasks.heartbeat").exists():
            assert worker.poll() is None, "qcluster exited early"
            assert time.monotonic() < deadline, "the heartbeat schedule never ran"
            time.sleep(0.5)
    assert WorkerHeartbeat.objects.filter(cluster=cluster).exists()
