"""The live stream: permission on connect and on each join; stored events reach their groups."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings

from config.asgi import application
from tests.identity import client_signed_in
from tests.servers import CONNECT_WAIT
from tests.webhooks.conftest import new_event
from webhooks.consumers import CLOSE_FORBIDDEN, CLOSE_UNAUTHENTICATED

pytestmark = pytest.mark.django_db(transaction=True)


def _session_cookie(user) -> bytes:  # type: ignore[no-untyped-def]
    # A finished sign-in: a role that must have a second factor (compliance) has passed it.
    client = client_signed_in(user)
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}".encode()


async def _connect(user=None) -> WebsocketCommunicator:  # type: ignore[no-untyped-def]
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if user is not None:
        headers.append((b"cookie", await sync_to_async(_session_cookie)(user)))
    return WebsocketCommunicator(application, "/ws/webhooks/", headers=headers)


async def test_anonymous_visitors_are_refused() -> None:
    communicator = await _connect()

    connected, code = await communicator.connect(timeout=CONNECT_WAIT)

    assert not connected and code == CLOSE_UNAUTHENTICATED


async def test_users_without_a_role_are_refused(db) -> None:  # type: ignore[no-untyped-def]
    from staff.models import StaffUser

    user = await sync_to_async(StaffUser.objects.create_user)(email="x@payops.local", password="p")
    communicator = await _connect(user)

    connected, code = await communicator.connect(timeout=CONNECT_WAIT)

    assert not connected and code == CLOSE_FORBIDDEN


async def test_event_stream_broadcast_reaches_staff_with_the_permission(
    demo_staff, post_signed
) -> None:
    communicator = await _connect(demo_staff["compliance"])
    assert (await communicator.connect(timeout=CONNECT_WAIT))[0]
    await communicator.send_json_to({"action": "join", "group": "events"})
    assert await communicator.receive_json_from(timeout=5) == {"joined": "events", "id": None}
    await communicator.send_json_to({"action": "join", "group": "user", "id": "u-live"})
    assert (await communicator.receive_json_from(timeout=5))["joined"] == "user"
    payload = new_event("user.created", user_id="u-live")

    response = await sync_to_async(post_signed)(payload)

    assert response.status_code == 200
    received = [await communicator.receive_json_from(timeout=5) for _ in range(2)]
    assert {m["event_id"] for m in received} == {payload["data"]["event_id"]}
    assert all(m["type"] == "webhook.event" and m["event_type"] == "user.created" for m in received)
    await communicator.disconnect()


async def test_each_join_is_checked_against_its_groups_permission(demo_staff, post_signed) -> None:
    maker = await _connect(demo_staff["finance_maker"])
    assert (await maker.connect())[0]
    await maker.send_json_to({"action": "join", "group": "events"})
    assert await maker.receive_json_from(timeout=5) == {"error": "forbidden", "group": "events"}
    await maker.disconnect()

    compliance = await _connect(demo_staff["compliance"])
    assert (await compliance.connect())[0]
    await compliance.send_json_to({"action": "join", "group": "payout", "id": "p-1"})
    assert (await compliance.receive_json_from(timeout=5))["error"] == "forbidden"
    await compliance.send_json_to({"action": "join", "group": "user", "id": "bad id!"})
    assert (await compliance.receive_json_from(timeout=5))["error"] == "invalid id"
    await compliance.send_json_to({"action": "join", "group": "user", "id": "u-1"})
    assert (await compliance.receive_json_from(timeout=5))["joined"] == "user"

    await sync_to_async(post_signed)(new_event("payout.created", payout_id="p-1", status="CREATED"))
    await sync_to_async(post_signed)(new_event("user.created", user_id="u-1"))

    message = await compliance.receive_json_from(timeout=5)
    assert message["event_type"] == "user.created"
    assert await compliance.receive_nothing(timeout=0.3)
    await compliance.disconnect()


def _outbox(event_id: str) -> dict[str, set[str]]:
    from console.models import LiveMessage

    rows: dict[str, set[str]] = {}
    for row in LiveMessage.objects.filter(message__event_id=event_id):
        rows.setdefault(row.message["status"], set()).add(row.group)
    return rows


@pytest.mark.usefixtures("outbox_layer")
def test_a_stored_event_is_written_for_other_processes_in_the_receivers_transaction(
    demo_staff, post_signed
) -> None:
    payload = new_event("user.created", user_id="u-outbox")

    assert post_signed(payload).status_code == 200

    assert _outbox(payload["data"]["event_id"]) == {
        "pending": {"webhooks.events", "webhooks.user.u-outbox"}
    }


@pytest.mark.usefixtures("outbox_layer")
def test_the_workers_processing_reaches_other_processes_pages(demo_staff, post_signed) -> None:
    from webhooks.models import WebhookEvent
    from webhooks.services.processing import webhook_event_process

    payload = new_event("user.created", user_id="u-processed")
    assert post_signed(payload).status_code == 200
    event = WebhookEvent.objects.get(event_id=payload["data"]["event_id"])

    status = webhook_event_process(event_pk=event.pk)

    assert status != "pending"
    assert _outbox(event.event_id)[status] == {"webhooks.events", "webhooks.user.u-processed"}
