"""The receiver: an async view that stores each delivery before answering, fast, never a 5xx."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import RequestDataTooBig
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from webhooks.services.live import abroadcast
from webhooks.services.receiving import ReceiverAnswer, delivery_receive

# The receiver's own threads (WEBHOOKS_RECEIVER_THREADS). Under ASGI Django runs each request's
# sync code in a thread of its own and closes its database connection when the request ends:
# opening and closing one was a quarter of a delivery's time. These threads live as long as the
# process, so each keeps its connection (`_connection_kept`), checked before every use.
_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()
_kept = threading.local()


def _receiver_executor() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(
                max_workers=settings.WEBHOOKS_RECEIVER_THREADS, thread_name_prefix="webhook-rx"
            )
        return _executor


def _connection_kept(**kwargs: Any) -> ReceiverAnswer:
    """delivery_receive on this thread's kept connection: a broken one (after a database error)
    or one older than WEBHOOKS_RECEIVER_CONN_MAX_AGE is closed first, and the call opens a new
    one (from the pool on PostgreSQL)."""
    now = time.monotonic()
    raw = connection.connection
    if raw is not None:
        if raw is not getattr(_kept, "raw", None):
            _kept.raw, _kept.opened = raw, now
        too_old = now - _kept.opened > settings.WEBHOOKS_RECEIVER_CONN_MAX_AGE
        if too_old or (connection.errors_occurred and not connection.is_usable()):
            connection.close()
        connection.errors_occurred = False
    return delivery_receive(**kwargs)


async def _receive(**kwargs: Any) -> ReceiverAnswer:
    if settings.WEBHOOKS_RECEIVER_THREADS <= 0:
        return await sync_to_async(delivery_receive)(**kwargs)
    return await sync_to_async(
        _connection_kept, thread_sensitive=False, executor=_receiver_executor()
    )(**kwargs)


def _declared_length(request: HttpRequest) -> int | None:
    try:
        return int(request.headers.get("Content-Length", ""))
    except ValueError:
        return None


@csrf_exempt
@require_POST
@login_not_required
async def webhook_receive(request: HttpRequest, receiver_id: str) -> JsonResponse:
    started = time.perf_counter()
    declared = _declared_length(request)
    body: bytes | None
    if declared is not None and declared > settings.WEBHOOKS_MAX_BODY_BYTES:
        body, size = None, declared  # not read at all: refused on its declared size
    else:
        try:
            body = request.body
        except RequestDataTooBig:
            body, size = None, declared or settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1
        else:
            size = len(body)
    answer = await _receive(
        receiver_id=receiver_id,
        headers=dict(request.headers),
        body=body,
        body_size=size,
        started=started,
    )
    if answer.broadcast is not None:
        # Committed by now (delivery_receive's transaction has closed): tell the live pages.
        await abroadcast(*answer.broadcast)
    return JsonResponse(answer.body(), status=answer.status)
