"""The receiver: an async view that stores each delivery before answering, fast, never a 5xx."""

from __future__ import annotations

import time

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from webhooks.services.live import abroadcast
from webhooks.services.receiving import delivery_receive


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
    answer = await sync_to_async(delivery_receive)(
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
