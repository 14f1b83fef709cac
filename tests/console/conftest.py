"""Fixtures for the console tests: a real emulator over HTTP and a port nothing listens on."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.servers import serve_in_thread


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def emulator_url() -> Iterator[str]:
    """The emulator's ASGI application served by uvicorn on a free port in a background thread."""
    from emulator.asgi import application

    with serve_in_thread(application, lifespan="on") as url:
        yield url


@pytest.fixture
def closed_port_url() -> str:
    """A URL on which nothing listens."""
    return f"http://127.0.0.1:{free_port()}"
