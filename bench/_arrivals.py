"""The emulator behind a recorder: when each payout initiation arrives, one JSON line in a file.

Served by uvicorn in the release-to-call benchmark (`bench/bench_release_to_call.py`): the time is
taken as the request reaches the emulator's process, before its edge (limits, faults) or Django
see it, so the figure ends where the upstream receives the call.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from emulator.asgi import application as emulator

# Opened once; each arrival is one small append (a local file: it does not hold the loop up).
ARRIVALS = os.open(os.environ["BENCH_ARRIVALS_FILE"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)


def _header(scope: dict[str, Any], name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return ""


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if (
        scope["type"] == "http"
        and scope.get("method") == "POST"
        and scope.get("path", "").endswith("/payout")
    ):
        line = json.dumps({"at": time.time(), "key": _header(scope, b"idempotency-key")})
        os.write(ARRIVALS, (line + "\n").encode())
    await emulator(scope, receive, send)
