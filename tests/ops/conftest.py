"""Fixtures for the ops tests: a real emulator over HTTP, free ports, staff users with roles."""

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


@pytest.fixture
def roles_synced(transactional_db: None) -> None:
    from staff.roles import roles_sync

    roles_sync()


@pytest.fixture
def maker(roles_synced: None):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import Group

    from staff.models import StaffUser

    user = StaffUser.objects.create_user("maker-ops@example.test", "pw-ops-12345")
    user.groups.add(Group.objects.get(name="finance_maker"))
    return user


@pytest.fixture
def roleless(transactional_db: None):  # type: ignore[no-untyped-def]
    from staff.models import StaffUser

    return StaffUser.objects.create_user("nobody-ops@example.test", "pw-ops-12345")
