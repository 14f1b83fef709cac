"""A real qcluster, started the way `make run` starts it, runs the heartbeat schedule."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.db import connection

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


@pytest.mark.django_db(transaction=True)
def test_a_running_qcluster_records_the_heartbeat() -> None:
    cluster = f"ops-test-{os.getpid()}"
    call_command("sync_schedules", stdout=StringIO())
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=_env_for_the_test_database(cluster),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        # The scheduler looks for due schedules about every 30 s; allow a few rounds.
        deadline = time.monotonic() + 150
        while not WorkerHeartbeat.objects.filter(cluster=cluster).exists():
            assert worker.poll() is None, "qcluster exited early"
            assert time.monotonic() < deadline, "no heartbeat from the worker"
            time.sleep(0.5)
    finally:
        worker.terminate()
        try:
            output, _ = worker.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            output, _ = worker.communicate()

    beat = WorkerHeartbeat.objects.get(cluster=cluster)
    assert beat.beat_at is not None
    assert b"console.tasks.heartbeat" in output
