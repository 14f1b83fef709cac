"""The staff events websocket: who may connect, and broadcasts reaching connected staff."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db import transaction
from django.test import Client

from config.asgi import application
from console.broadcast import abroadcast_event, broadcast_event, broadcast_event_on_commit
from console.consumers import CLOSE_FORBIDDEN, CLOSE_SESSION_RECHECK, CLOSE_UNAUTHENTICATED
from tests.servers import CONNECT_WAIT

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


def _session_cookie(user, idle_seconds: float = 0) -> bytes:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    if idle_seconds:  # as if the session had been idle that long (staff.sessions)
        from datetime import datetime, timedelta

        from staff.sessions import LAST_SEEN_KEY

        session = client.session
        last = datetime.fromisoformat(session[LAST_SEEN_KEY]) - timedelta(seconds=idle_seconds)
        session[LAST_SEEN_KEY] = last.isoformat()
        session.save()
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}".encode()


async def _connect(user=None, idle_seconds: float = 0) -> WebsocketCommunicator:  # type: ignore[no-untyped-def]
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if user is not None:
        cookie = await sync_to_async(_session_cookie)(user, idle_seconds)
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, "/ws/events/", headers=headers)


async def test_anonymous_users_are_refused_with_4401() -> None:
    communicator = await _connect()

    connected, code = await communicator.connect(timeout=CONNECT_WAIT)

    assert not connected
    assert code == CLOSE_UNAUTHENTICATED


async def test_users_without_a_staff_role_are_refused_with_4403(roleless) -> None:
    communicator = await _connect(roleless)

    connected, code = await communicator.connect(timeout=CONNECT_WAIT)

    assert not connected
    assert code == CLOSE_FORBIDDEN


async def test_an_expired_session_gets_no_stream(maker) -> None:
    communicator = await _connect(maker, idle_seconds=61 * 60)  # a maker's idle limit is 60 min

    connected, code = await communicator.connect(timeout=CONNECT_WAIT)

    assert not connected
    assert code == CLOSE_UNAUTHENTICATED


async def test_an_open_stream_is_closed_for_a_recheck_when_its_session_would_expire(
    maker,  # type: ignore[no-untyped-def]
) -> None:
    communicator = await _connect(maker, idle_seconds=60 * 60 - 1)  # expires in a second
    connected, _ = await communicator.connect(timeout=CONNECT_WAIT)
    assert connected
    closed = await communicator.receive_output(timeout=15)
    assert closed == {"type": "websocket.close", "code": CLOSE_SESSION_RECHECK}


async def test_staff_receive_broadcast_events(maker) -> None:
    communicator = await _connect(maker)
    connected, _ = await communicator.connect(timeout=CONNECT_WAIT)
    assert connected

    await abroadcast_event("payout.updated", {"id": 7, "status": "approved"})

    assert await communicator.receive_json_from(timeout=5) == {
        "kind": "payout.updated",
        "payload": {"id": 7, "status": "approved"},
    }
    await communicator.disconnect()


async def test_role_broadcasts_reach_only_that_role(maker) -> None:
    communicator = await _connect(maker)
    assert (await communicator.connect(timeout=CONNECT_WAIT))[0]

    await abroadcast_event("for.approvers", {"n": 1}, role="finance_approver")
    await abroadcast_event("for.makers", {"n": 2}, role="finance_maker")

    assert await communicator.receive_json_from(timeout=5) == {
        "kind": "for.makers",
        "payload": {"n": 2},
    }
    assert await communicator.receive_nothing(timeout=0.2)
    await communicator.disconnect()


async def test_sync_broadcast_from_a_worker_thread_arrives(maker) -> None:
    communicator = await _connect(maker)
    assert (await communicator.connect(timeout=CONNECT_WAIT))[0]

    await sync_to_async(broadcast_event, thread_sensitive=False)("quote.created", {"id": "q1"})

    assert (await communicator.receive_json_from(timeout=5))["kind"] == "quote.created"
    await communicator.disconnect()


async def test_an_idle_page_still_hears_a_broadcast_after_the_layers_blocking_wait(maker) -> None:
    """channels-redis waits for a page's next message in blocking pops of 5 s; with redis-py 8's
    default 5 s socket timeout the read timed out as Redis answered and the consumer died, so a
    page idle that long heard nothing more (the cause of a broadcast test lost in full runs)."""
    communicator = await _connect(maker)
    assert (await communicator.connect(timeout=CONNECT_WAIT))[0]
    layer = get_channel_layer()
    # Past one empty pop on Redis (the database outbox has no such wait).
    idle = getattr(layer, "brpop_timeout", 0) + 1.5
    await asyncio.sleep(idle)

    await abroadcast_event("after.idle", {"idle": idle})

    assert (await communicator.receive_json_from(timeout=CONNECT_WAIT))["kind"] == "after.idle"
    await communicator.disconnect()


@pytest.mark.redis
async def test_a_broadcast_from_another_process_arrives_over_redis(maker) -> None:
    communicator = await _connect(maker)
    assert (await communicator.connect(timeout=CONNECT_WAIT))[0]
    code = (
        "import django, os; django.setup(); "
        "from console.broadcast import broadcast_event; "
        "broadcast_event('from.elsewhere', {'pid': os.getpid()})"
    )
    sender = subprocess.Popen(  # noqa: ASYNC220 (starting it does not wait; the loop stays free)
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # A wait, not a timing assertion: on a loaded machine the delivery through Redis can lag.
        message = await communicator.receive_json_from(timeout=CONNECT_WAIT * 3)
    finally:
        _, errors = sender.communicate(timeout=CONNECT_WAIT)
    assert sender.returncode == 0, errors
    assert message["kind"] == "from.elsewhere"
    assert message["payload"]["pid"] != os.getpid()
    await communicator.disconnect()


async def test_on_commit_broadcast_waits_for_the_commit_and_is_dropped_on_rollback(maker) -> None:
    communicator = await _connect(maker)
    assert (await communicator.connect(timeout=CONNECT_WAIT))[0]

    def in_transaction(kind: str, fail: bool) -> None:
        with transaction.atomic():
            broadcast_event_on_commit(kind, {})
            if fail:
                raise_after_queueing()

    def raise_after_queueing() -> None:
        raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        await sync_to_async(in_transaction)("rolled.back", True)
    await sync_to_async(in_transaction)("committed", False)

    assert (await communicator.receive_json_from(timeout=5))["kind"] == "committed"
    assert await communicator.receive_nothing(timeout=0.2)
    await communicator.disconnect()


async def test_a_session_still_at_its_second_step_is_refused_with_4401(roles_synced) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import Group

    from staff.models import StaffUser
    from tests.identity import client_signed_in, enrolled

    def approver_sessions() -> tuple[bytes, bytes]:
        approver = StaffUser.objects.create_user("approver-ws@example.test", "pw-ws-12345")
        approver.groups.add(Group.objects.get(name="finance_approver"))
        enrolled(approver)
        name = settings.SESSION_COOKIE_NAME
        password_only = Client()
        password_only.force_login(approver)  # the password passed, the second factor not yet
        verified = client_signed_in(approver)
        return (
            f"{name}={password_only.cookies[name].value}".encode(),
            f"{name}={verified.cookies[name].value}".encode(),
        )

    unfinished, finished = await sync_to_async(approver_sessions)()
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]

    refused = WebsocketCommunicator(
        application, "/ws/events/", headers=[*headers, (b"cookie", unfinished)]
    )
    connected, code = await refused.connect()
    assert not connected
    assert code == CLOSE_UNAUTHENTICATED

    accepted = WebsocketCommunicator(
        application, "/ws/events/", headers=[*headers, (b"cookie", finished)]
    )
    assert (await accepted.connect())[0]
    await accepted.disconnect()


@pytest.mark.parametrize("path", ["/ws/events/", "/ws/webhooks/"])
async def test_a_password_only_sign_in_opens_no_live_stream_whatever_its_headers(
    roles_synced, path: str
) -> None:  # type: ignore[no-untyped-def]
    """The real sign-in page's password step, then a socket with a junk Authorization header:
    refused by the same rule as the pages and the API (staff.second_factor.state)."""
    from tests.identity import enrolled
    from tests.staff.second_factor_support import password_signed_in, person

    def password_only_cookie() -> bytes:
        approver = person("approver-ws-login@example.test", "finance_approver")
        enrolled(approver)
        client = password_signed_in(approver)
        name = settings.SESSION_COOKIE_NAME
        return f"{name}={client.cookies[name].value}".encode()

    cookie = await sync_to_async(password_only_cookie)()
    headers = [
        (b"origin", b"http://testserver"),
        (b"host", b"testserver"),
        (b"authorization", b"Basic eDp5"),
        (b"cookie", cookie),
    ]
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, code = await communicator.connect(timeout=CONNECT_WAIT)
    assert not connected
    assert code in {CLOSE_UNAUTHENTICATED, CLOSE_FORBIDDEN}
