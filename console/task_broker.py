"""The embedded default's task broker: django-q2's ORM broker, woken as soon as a task is queued.

The ORM broker finds new tasks by polling the database every `Q_CLUSTER["poll"]` seconds: on
average half a poll passed between an approver's release and the worker starting the payout's
initiation (p50 671 ms, p95 1,377 ms at a 1 s poll). Polling faster costs the database a query
and a reconnection per poll, all day, for nothing. Here each pusher also listens on a Unix
datagram socket of its own, in a directory named for the database and the queue; queuing a task
sends one byte to each of them once the task's row is committed, and a waiting pusher looks at
the table again at once.

The row in the table stays the task (the durable path is django-q2's, unchanged): a wake-up that
is lost (a pusher on another machine, a full socket buffer, a platform without Unix sockets)
only means the next poll finds the task, as before. See ADR 0014.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import select
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone
from django_q.brokers.orm import ORM
from django_q.conf import Conf

logger = logging.getLogger("console")

WAKE = b"!"
_SUPPORTED = hasattr(socket, "AF_UNIX")


def wake_directory(list_key: str) -> Path:
    """Where the pushers of one queue on one database listen (short: socket paths are short)."""
    database = connections[Conf.ORM or DEFAULT_DB_ALIAS].settings_dict
    name = str(database.get("NAME") or "")
    if database["ENGINE"].endswith("sqlite3") and not name.startswith(("file:", ":memory:")):
        name = os.path.abspath(name)
    identity = "|".join(
        (database["ENGINE"], str(database.get("HOST") or ""), str(database.get("PORT") or ""))
    )
    digest = hashlib.sha256(f"{identity}|{name}|{list_key}".encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"payops-q-{digest}"


def wake(list_key: str) -> int:
    """Nudge every pusher listening for this queue; how many were reached. Never raises."""
    if not _SUPPORTED:
        return 0
    directory = wake_directory(list_key)
    try:
        names = os.listdir(directory)
    except OSError:
        return 0  # no pusher has listened here yet: the poll finds the task
    reached = 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
        sender.setblocking(False)
        for name in names:
            path = directory / name
            try:
                sender.sendto(WAKE, str(path))
                reached += 1
            except (ConnectionRefusedError, FileNotFoundError):
                # Nobody listens there any more (a pusher that died): tidy its leftover.
                with contextlib.suppress(OSError):
                    path.unlink()
            except OSError:
                pass  # e.g. its buffer is full: it has wake-ups waiting already
    return reached


class Listener:
    """One pusher's socket: bound before it looks at the table, so no wake-up is missed."""

    def __init__(self, list_key: str) -> None:
        self.pid = os.getpid()
        directory = wake_directory(list_key)
        directory.mkdir(mode=0o700, exist_ok=True)
        self.path = directory / f"{self.pid}.sock"
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a leftover of an earlier process with our pid
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(str(self.path))
        self.socket.setblocking(False)

    def wait(self, timeout: float) -> bool:
        """Until a wake-up or `timeout` seconds; True when woken. Takes every pending wake-up."""
        select.select([self.socket], [], [], timeout)
        woken = False
        while True:
            try:
                self.socket.recv(64)
            except (BlockingIOError, InterruptedError):
                return woken
            woken = True

    def close(self) -> None:
        self.socket.close()
        with contextlib.suppress(OSError):
            self.path.unlink()


class WakingOrmBroker(ORM):
    """django-q2's ORM broker (same table, same locking), with a wake-up instead of a blind
    sleep when the queue is empty."""

    def __init__(self, list_key: str | None = None) -> None:
        super().__init__(list_key=list_key or Conf.CLUSTER_NAME)
        self._listener: Listener | None = None
        self._listen_failed = False

    def enqueue(self, task: Any) -> Any:
        package_id = super().enqueue(task)
        key = self.list_key
        if transaction.get_autocommit(using=Conf.ORM):
            wake(key)
        else:  # the row is not visible to the pusher before the caller's commit
            transaction.on_commit(lambda: wake(key), using=Conf.ORM)
        return package_id

    def dequeue(self) -> list[tuple[Any, Any]] | None:
        listener = self._listen()
        tasks = self._claim()
        if tasks:
            return tasks
        if listener is None:
            time.sleep(Conf.POLL)  # the ORM broker's own wait
        else:
            listener.wait(Conf.POLL)
        return None

    def _claim(self) -> list[tuple[Any, Any]]:
        """Claim up to `bulk` due tasks, each only if no other cluster claimed it first (the ORM
        broker's own claim: a conditional update of the task's lock)."""
        claimed: list[tuple[Any, Any]] = []
        due = self.get_connection().filter(key=self.list_key, lock__lt=timezone.now())
        for task in due[0 : Conf.BULK]:
            if (
                self.get_connection()
                .filter(id=task.id, lock=task.lock)
                .update(lock=self.timeout(task))
            ):
                claimed.append((task.pk, task.payload))
        return claimed

    def _listen(self) -> Listener | None:
        if not _SUPPORTED or self._listen_failed:
            return None
        if self._listener is not None and self._listener.pid == os.getpid():
            return self._listener
        try:  # first call in this (pusher) process; a forked copy binds its own
            self._listener = Listener(self.list_key)
        except OSError as exc:
            logger.warning("task queue: no wake-up socket (%s); polling every %ss", exc, Conf.POLL)
            self._listen_failed = True
            return None
        return self._listener
