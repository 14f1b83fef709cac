"""An ASGI application served by uvicorn on a free port in a background thread, for live tests."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import uvicorn

# How long a websocket handshake may take on a loaded machine (channels waits 1 s by default);
# a wait, not a timing assertion: a refused or accepted connection answers at once.
CONNECT_WAIT = 10


@contextlib.contextmanager
def serve_in_thread(application: Any, *, lifespan: str, **config: Any) -> Iterator[str]:
    """Yields the URL once /healthz answers 200; stops the server when the block ends.

    `config`: more uvicorn.Config options (e.g. forwarded_allow_ips, as scripts/run_all.py sets)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    options = {"lifespan": lifespan, "log_level": "warning", **config}
    server = uvicorn.Server(uvicorn.Config(application, **options))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the emulator did not answer /healthz")
            time.sleep(0.05)
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
