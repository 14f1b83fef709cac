"""A real `manage.py qcluster` (as `make run` starts it) against the running test's database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def env_for_the_test_database(cluster: str) -> dict[str, str]:
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
def qcluster(
    cluster: str, *, env: Mapping[str, str] | None = None, capture: bool = False
) -> Iterator[subprocess.Popen[bytes]]:
    """`manage.py qcluster` named `cluster` on this test's database (more variables in `env`);
    its output kept in `stdout` when `capture`; stopped, then killed if it lingers, and reaped."""
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env_for_the_test_database(cluster) | dict(env or {}),
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.STDOUT if capture else subprocess.DEVNULL,
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
