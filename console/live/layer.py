"""The embedded default's channel layer: in-memory delivery plus a database outbox (ADR 0012).

Channels' InMemoryChannelLayer reaches only the consumers of its own process, so a change made by
the worker (or a command, or another web process) never reached an open page. This layer keeps
in-memory delivery for its own process and adds the outbox:

- every message sent is also written to `console.LiveMessage` (by `console.broadcast`, inside the
  sender's transaction: a rolled-back change sends nothing, a committed one cannot be lost);
- a process with websocket consumers runs one poller in its event loop, started by the first
  `group_add` and stopped when the last group empties. It reads the rows newer than the ones it
  has seen every `poll_interval` seconds and hands the ones written by other processes to its
  local groups. It starts after the newest row (a restart replays nothing) and a process with no
  open page never reads the table.

With Redis configured (channels-redis), none of this is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import InMemoryChannelLayer
from django.db import connections

from console.live import outbox
from console.live.cursor import Cursor

logger = logging.getLogger(__name__)
T = TypeVar("T")


class OutboxChannelLayer(InMemoryChannelLayer):
    """InMemoryChannelLayer whose messages also reach the other processes through the database."""

    def __init__(self, poll_interval: float = 0.15, batch: int = 500, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.poll_interval = poll_interval
        self.batch = batch
        self._pid = 0
        self._origin = ""
        self._poller: asyncio.Task[None] | None = None
        self._cursor: Cursor | None = None
        self._executor: ThreadPoolExecutor | None = None

    @property
    def origin(self) -> str:
        """This process's mark on the rows it writes (renewed in a forked child)."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._origin = f"{self._pid}-{secrets.token_hex(8)}"
        return self._origin

    # --- Sending ---------------------------------------------------------------------------

    def record(self, groups: Iterable[str], message: dict[str, Any]) -> None:
        """Write the message for `groups` to the outbox, in the caller's transaction if any."""
        groups = list(groups)
        for group in groups:
            self.require_valid_group_name(group)
        outbox.outbox_write(groups=groups, message=message, origin=self.origin)

    async def deliver_local(self, groups: Iterable[str], message: dict[str, Any]) -> None:
        """Hand the message to this process's consumers in `groups` (no outbox row)."""
        for group in groups:
            await super().group_send(group, message)

    def deliver_local_sync(self, groups: Iterable[str], message: dict[str, Any]) -> None:
        """deliver_local for sync code (an on_commit callback); free when nobody listens here."""
        groups = [group for group in groups if self.groups.get(group)]
        if groups:
            async_to_sync(self.deliver_local)(groups, message)

    async def group_send_many(self, groups: Iterable[str], message: dict[str, Any]) -> None:
        """Record once for every group, then deliver locally at once."""
        groups = list(groups)
        await sync_to_async(self.record)(groups, message)
        await self.deliver_local(groups, message)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await self.group_send_many([group], message)

    # --- Listening -------------------------------------------------------------------------

    def listening(self) -> bool:
        """Whether any consumer of this process is in any group."""
        return any(self.groups.values())

    async def group_add(self, group: str, channel: str) -> None:
        await super().group_add(group, channel)
        await self._poller_ensure()

    async def group_discard(self, group: str, channel: str) -> None:
        await super().group_discard(group, channel)
        if not self.listening():
            await self._poller_stop()

    async def flush(self) -> None:
        await super().flush()
        await self._poller_stop()

    async def close(self) -> None:
        await self._poller_stop()

    def poller_running(self) -> bool:
        """Whether this process's poller is alive (in an event loop that is still open)."""
        task = self._poller
        return task is not None and not task.done() and not task.get_loop().is_closed()

    async def _poller_ensure(self) -> None:
        if self.poller_running():
            return  # one poller per process, in the loop that started it
        await self._poller_stop()  # a leftover of a closed event loop (a test's)
        # The start position is read before group_add returns: a message committed once the
        # consumer has joined comes after it, so the page cannot miss it.
        try:
            cursor: Cursor | None = await self._in_db_thread(
                outbox.outbox_start, now=time.monotonic()
            )
        except Exception:
            logger.exception("live outbox: could not read the start position; retrying")
            cursor = None
        if self.poller_running() or not self.listening():
            return  # another group_add started it meanwhile, or everyone left
        self._cursor = cursor
        loop = asyncio.get_running_loop()
        self._poller = loop.create_task(self._poll(), name="live-outbox-poller")

    async def _poller_stop(self) -> None:
        task, self._poller = self._poller, None
        if task is None or task.done():
            return
        loop = task.get_loop()
        if loop.is_closed():
            self._db_thread_release()  # its finally will never run
        elif loop is asyncio.get_running_loop():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        else:
            loop.call_soon_threadsafe(task.cancel)

    async def _poll(self) -> None:
        failures = 0
        try:
            while self.listening():
                try:
                    rows = await self._read()
                except Exception:
                    failures += 1
                    if failures == 1:
                        logger.exception("live outbox: read failed; retrying with back-off")
                    await asyncio.sleep(min(5.0, self.poll_interval * 2**failures))
                    continue
                failures = 0
                for row in rows:
                    if row.origin != self.origin:  # our own were delivered when they were sent
                        await self.deliver_local([row.group], row.message)
                if len(rows) < self.batch:
                    await asyncio.sleep(self.poll_interval)
        finally:
            self._db_thread_release()

    async def _read(self) -> list[outbox.OutboxRow]:
        if self._cursor is None:
            self._cursor = await self._in_db_thread(outbox.outbox_start, now=time.monotonic())
            return []
        rows, self._cursor = await self._in_db_thread(
            outbox.outbox_read, self._cursor, limit=self.batch, now=time.monotonic()
        )
        return rows

    # --- The poller's database thread -------------------------------------------------------

    async def _in_db_thread(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `func` on the poller's own thread (one connection, kept while polling)."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="live-outbox")

        def call() -> T:
            try:
                return func(*args, **kwargs)
            except Exception:
                connections.close_all()  # a broken connection is replaced on the next read
                raise

        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    def _db_thread_release(self) -> None:
        """Close the poller thread's connection once it stops (no pooled connection held)."""
        if self._executor is not None:
            self._executor.submit(connections.close_all)
