"""The event processor: stored events are the work queue, taken by a thread in each worker.

The receiver writes no task row per event (ADR 0024): the pending event itself is the work
item. A processor thread runs in every task worker process (started by django-q2's
`post_spawn`, like the heartbeat) and claims pending events one at a time
(`webhook_event_claim_next`: the processing transaction's own row lock is the claim). It is
woken as soon as a receiver commits an event:

- with Redis, through a list (`LPUSH` by the receiver, `BLPOP` by the processors);
- on the embedded default, through the Unix datagram sockets of console.task_broker (ADR 0014),
  under a queue name of its own.

A wake-up that is lost only costs the processor's poll (`WEBHOOKS_PROCESSOR_POLL_SECONDS`), and
the `webhooks.retry_due` schedule still sweeps pending events no processor took.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection

from console import task_broker
from webhooks.services.processing import webhook_event_claim_next

logger = logging.getLogger(__name__)

WAKE_QUEUE = "webhooks-events"
_REDIS_WAKE_KEY = "payops:webhooks:wake"
# Wake-ups kept in the Redis list at most: one is enough to make a processor look again.
_REDIS_WAKE_KEEP = 4

_redis_client: Any = None


def _redis() -> Any:
    global _redis_client
    if _redis_client is None:
        import redis

        # Its reads include the processor's blocking wait (up to the poll interval), which must
        # not hit redis-py's default 5 s socket timeout.
        poll = settings.WEBHOOKS_PROCESSOR_POLL_SECONDS
        read_seconds = settings.REDIS_BLOCKING_READ_SECONDS + poll
        _redis_client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=read_seconds)
    return _redis_client


def processors_wake() -> None:
    """Tell the processors to look now (after the event's commit). Never raises."""
    try:
        if settings.REDIS_URL:
            pipe = _redis().pipeline(transaction=False)
            pipe.lpush(_REDIS_WAKE_KEY, b"1")
            pipe.ltrim(_REDIS_WAKE_KEY, 0, _REDIS_WAKE_KEEP - 1)
            pipe.execute()
        else:
            task_broker.wake(WAKE_QUEUE)
    except Exception:  # the poll finds the event; an acknowledgement must not fail for this
        logger.warning("could not wake the webhook processors", exc_info=True)


class _Waiter:
    """Where one processor waits: the Redis list or its own socket, bound before it looks."""

    def __init__(self) -> None:
        self._listener: task_broker.Listener | None = None
        if not settings.REDIS_URL:
            with contextlib.suppress(OSError, AttributeError):
                self._listener = task_broker.Listener(WAKE_QUEUE)

    def wait(self, timeout: float) -> None:
        if settings.REDIS_URL:
            try:
                if _redis().blpop([_REDIS_WAKE_KEY], timeout=max(1, round(timeout))):
                    _redis().delete(_REDIS_WAKE_KEY)  # one look serves every pending wake-up
            except Exception:
                logger.warning("webhook processor: Redis wait failed", exc_info=True)
                threading.Event().wait(timeout)
        elif self._listener is not None:
            self._listener.wait(timeout)
        else:
            threading.Event().wait(timeout)

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()


def webhook_events_drain(*, limit: int = 100) -> int:
    """Process pending events until none is left or `limit` were taken; how many were taken."""
    taken = 0
    while taken < limit:
        if webhook_event_claim_next() is None:
            break
        taken += 1
    return taken


def webhook_processor_run(stop: threading.Event) -> None:
    """The processor's loop: drain, then wait for a wake-up or the poll; until `stop` is set."""
    poll = settings.WEBHOOKS_PROCESSOR_POLL_SECONDS
    waiter = _Waiter()
    try:
        while not stop.is_set():
            try:
                taken = webhook_events_drain()
            except Exception:
                # The event's transaction was rolled back: it is pending again. Look later,
                # on a fresh connection, rather than spin on a fault.
                logger.exception("webhook processor: processing failed")
                with contextlib.suppress(Exception):
                    connection.close()
                stop.wait(poll)
                continue
            close_old_connections()
            if taken == 0:
                waiter.wait(poll)
    finally:
        waiter.close()
        with contextlib.suppress(Exception):
            connection.close()


_started_in: int | None = None
_stop = threading.Event()


def webhook_processor_start(sender: object = None, proc_name: str = "", **kwargs: Any) -> None:
    """django-q2's post_spawn receiver: one processor thread per worker process."""
    from django_q.conf import Conf

    global _started_in
    if Conf.SYNC or not settings.WEBHOOKS_PROCESSOR_IN_WORKERS or _started_in == os.getpid():
        return  # inline tasks (tests) run django-q2's worker in the caller: no thread there
    _started_in = os.getpid()
    thread = threading.Thread(
        target=webhook_processor_run, args=(_stop,), name="webhook-processor", daemon=True
    )
    thread.start()
