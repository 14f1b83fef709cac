"""A real qcluster, started the way `make run` starts it: beats as it starts, then on schedule."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from io import StringIO
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.db import connection
from django_q.models import Schedule, Task
from django_q.signals import post_spawn

from console.models import WorkerHeartbeat

ROOT = Path(__file__).resolve().parents[2]


def _env_for_the_test_database(cluster: str) -> dict[str, str]:
    """The environment that points a child process at the database this test is using."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "PAYOPS_Q_NAME": cluster,
        "PAYOPS_Q_WORKERS": "1",
    }
    name = str(connection.settings_dict["NAME"])
    if connection.vendor == "sqlite":
        env["DATABASE_URL"] = ""
        env["PAYOPS_SQLITE_PATH"] = name
    else:
        env["DATABASE_URL"] = (
            urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{name}").geturl()
        )
    return env


@contextmanager
def _qcluster(cluster: str) -> Iterator[subprocess.Popen[bytes]]:
    """`manage.py qcluster` against this test's database; stopped (and reaped) when done."""
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=_env_for_the_test_database(cluster),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield worker
    finally:
        worker.terminate()
        try:
            worker.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.communicate()


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
    with _qcluster(cluster) as worker:
        # Generous for a loaded machine; the beat comes as soon as a worker process is up.
        _wait_for_heartbeat(worker, cluster, within=90)
    assert not Schedule.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_running_qcluster_runs_the_heartbeat_schedule() -> None:
    cluster = f"ops-test-{os.getpid()}"
    call_command("sync_schedules", stdout=StringIO())
    assert Schedule.objects.filter(name="payops:console.heartbeat").exists()
    with _qcluster(cluster) as worker:
        # The scheduler looks for due schedules about every 30 s; allow a few rounds.
        deadline = time.monotonic() + 150
        while not Task.objects.filter(func="console.tasks.heartbeat").exists():
            assert worker.poll() is None, "qcluster exited early"
            assert time.monotonic() < deadline, "the heartbeat schedule never ran"
            time.sleep(0.5)
    assert WorkerHeartbeat.objects.filter(cluster=cluster).exists()
