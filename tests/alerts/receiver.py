"""A real local HTTP server standing in for a Slack-compatible incoming webhook."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Receiver:
    url: str
    posts: list[dict[str, Any]] = field(default_factory=list)
    # The next this-many POSTs are answered 500 (and not counted as received).
    fail_next: int = 0

    def texts(self) -> list[str]:
        return [post["text"] for post in self.posts]


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    receiver = Receiver(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                failing = receiver.fail_next > 0
                if failing:
                    receiver.fail_next -= 1
                else:
                    assert self.headers["Content-Type"].startswith("application/json")
                    receiver.posts.append(json.loads(body))
            self.send_response(500 if failing else 200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/services/T000/B000/secret-token"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
