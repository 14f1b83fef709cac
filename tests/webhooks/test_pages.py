"""Webhook pages: who sees what (a test per role), masked secrets, constant queries, reprocess."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.webhooks.conftest import CURRENT, PREVIOUS, new_event
from webhooks.models import EventStatus, MissedEvent, ReprocessRun, WebhookEvent, WebhookEventLink

pytestmark = pytest.mark.django_db

ROLES_VIEWING = {"finance_maker": 403, "finance_approver": 200, "compliance": 200, "admin": 200}
ROLES_MANAGING = {"finance_maker": 403, "finance_approver": 403, "compliance": 403, "admin": 200}


def _events(environment, count: int) -> list[WebhookEvent]:
    return [
        WebhookEvent.objects.create(
            environment=environment,
            event_id=f"evt_{n}",
            event_type="payout.failed",
            payload=new_event("payout.failed", payout_id=f"p-{n}"),
            status=EventStatus.FAILED,
            object_ids=f"p-{n}",
        )
        for n in range(count)
    ]


@pytest.mark.parametrize(("role", "status"), ROLES_VIEWING.items())
def test_event_log_by_role(client_for, role, status, endpoint) -> None:
    assert client_for(role).get("/webhooks/events/").status_code == status


@pytest.mark.parametrize(("role", "status"), ROLES_MANAGING.items())
def test_endpoints_page_by_role(client_for, role, status, endpoint) -> None:
    assert client_for(role).get("/webhooks/").status_code == status


@pytest.mark.parametrize(("role", "status"), ROLES_MANAGING.items())
def test_rotate_and_reprocess_need_the_manage_permission(
    client_for, role, status, endpoint
) -> None:
    (event,) = _events(endpoint.environment, 1)
    if status == 403:
        client = client_for(role)
        assert (
            client.post(f"/webhooks/endpoints/{endpoint.environment.pk}/rotate/").status_code == 403
        )
        assert client.post(f"/webhooks/events/{event.pk}/reprocess/").status_code == 403
        assert client.post("/webhooks/events/reprocess/", {"status": "failed"}).status_code == 403
        assert ReprocessRun.objects.count() == 0
    else:
        response = client_for(role).post(f"/webhooks/events/{event.pk}/reprocess/")
        assert response.status_code == 302
        assert ReprocessRun.objects.get().event_ids == [event.pk]


def test_anonymous_visitors_are_sent_to_sign_in(client, endpoint) -> None:
    assert client.get("/webhooks/events/").status_code == 302


def test_endpoints_page_shows_secrets_masked_only(client_for, endpoint) -> None:
    html = client_for("admin").get("/webhooks/").content.decode()

    assert CURRENT not in html and PREVIOUS not in html
    assert CURRENT[-4:] in html and PREVIOUS[-4:] in html
    assert str(endpoint.receiver_id) in html


def test_event_log_costs_the_same_queries_for_one_or_many_events(client_for, endpoint) -> None:
    client = client_for("admin")
    _events(endpoint.environment, 1)
    client.get("/webhooks/events/")  # warm caches (content types, session)
    with CaptureQueriesContext(connection) as one:
        assert client.get("/webhooks/events/").status_code == 200
    WebhookEvent.objects.all().delete()
    _events(endpoint.environment, 30)
    with CaptureQueriesContext(connection) as many:
        assert client.get("/webhooks/events/").status_code == 200

    assert len(one) == len(many)


def test_event_log_filters_and_searches_by_any_upstream_id(client_for, endpoint) -> None:
    events = _events(endpoint.environment, 3)
    WebhookEventLink.objects.create(event=events[1], kind="payout", upstream_id="p-1")
    client = client_for("admin")

    html = client.get("/webhooks/events/", {"q": "p-1"}).content.decode()
    assert "evt_1" in html and "evt_0" not in html and "evt_2" not in html
    html = client.get("/webhooks/events/", {"q": "evt_2"}).content.decode()
    assert "evt_2" in html and "evt_1" not in html
    html = client.get("/webhooks/events/", {"status": "processed"}).content.decode()
    assert "evt_0" not in html
    html = client.get("/webhooks/events/", {"object_kind": "payout"}).content.decode()
    assert "evt_1" in html and "evt_0" not in html
    later = (timezone.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    html = client.get("/webhooks/events/", {"received_from": later}).content.decode()
    assert "evt_0" not in html


def test_refused_deliveries_are_listed_under_invalid_signature(client_for, post_signed) -> None:
    post_signed(new_event(), signature="c" * 64)

    html = client_for("admin").get("/webhooks/events/", {"status": "invalid"}).content.decode()

    assert "Invalid signature" in html and "signature does not match" in html


def test_event_page_shows_raw_beside_reserialised_when_raw_check_failed(
    client_for, post_signed
) -> None:
    payload = new_event("user.created", user_id="u-9", amount=5.0)
    event_id = payload["data"]["event_id"]
    pretty = (
        '{\n  "event": "user.created",\n  "data": {"event_id": "' + event_id + '", '
        '"user_id": "u-9", "amount": 5.0}\n}'
    ).encode()
    compact = (
        '{"event":"user.created","data":{"event_id":"'
        + payload["data"]["event_id"]
        + '","user_id":"u-9","amount":5}}'
    ).encode()
    assert post_signed(pretty, sign_over=compact).status_code == 200
    event = WebhookEvent.objects.get()

    html = client_for("compliance").get(f"/webhooks/events/{event.pk}/").content.decode()

    assert "Re-serialised (JSON.stringify)" in html
    assert "&quot;amount&quot;:5}" in html
    assert "Current" in html
    assert "u-9" in html


def test_live_row_is_empty_for_events_outside_the_filters(client_for, endpoint) -> None:
    (event,) = _events(endpoint.environment, 1)
    client = client_for("admin")

    assert b"evt_0" in client.get(f"/webhooks/events/{event.pk}/row/").content
    assert client.get(f"/webhooks/events/{event.pk}/row/", {"status": "processed"}).content == b""


def test_missed_events_page_lists_gaps(client_for, endpoint) -> None:
    MissedEvent.objects.create(
        environment=endpoint.environment,
        object_kind="payout",
        upstream_id="p-77",
        observed_state="COMPLETED",
        source="payout poll",
    )

    html = client_for("admin").get("/webhooks/missed/").content.decode()

    assert "p-77" in html and "COMPLETED" in html


def test_a_refused_delivery_page_shows_raw_and_reserialised_bodies(client_for, post_signed) -> None:
    from webhooks.models import WebhookDelivery

    post_signed(
        b'{"event": "user.created", "data": {"event_id": "evt_x", "n": 1.0}}', signature="d" * 64
    )
    delivery = WebhookDelivery.objects.get()

    html = client_for("admin").get(f"/webhooks/deliveries/{delivery.pk}/").content.decode()

    assert "Invalid signature" in html
    assert "&quot;n&quot;: 1.0" in html  # raw, as sent
    assert "&quot;n&quot;:1}" in html  # as JavaScript would sign it
    assert CURRENT not in html
    assert (
        client_for("finance_maker").get(f"/webhooks/deliveries/{delivery.pk}/").status_code == 403
    )


def test_reprocess_progress_page_and_its_polled_fragment(client_for, endpoint) -> None:
    run = ReprocessRun.objects.create(description="all failed", event_ids=[1, 2], total=2, done=1)
    client = client_for("admin")

    page = client.get(f"/webhooks/events/runs/{run.pk}/").content.decode()
    fragment = client.get(f"/webhooks/events/runs/{run.pk}/", headers={"HX-Request": "true"})

    assert "1 of 2 done" in page and 'hx-trigger="every 1s"' in page
    assert fragment.content.decode().lstrip().startswith('<div id="reprocess-progress"')
    run.done, run.finished_at = 2, timezone.now()
    run.save()
    finished = client.get(f"/webhooks/events/runs/{run.pk}/").content.decode()
    assert "finished" in finished and "every 1s" not in finished


def test_register_without_a_reachable_url_explains_on_the_page(
    client_for, endpoint, settings
) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = "ftp://nowhere"

    response = client_for("admin").post(
        f"/webhooks/endpoints/{endpoint.environment.pk}/register/", follow=True
    )

    assert "The public base URL must be an http(s) URL." in response.content.decode()


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("es", ("Endpoints de webhook", "Registrar", "Secreto actual", "Acciones")),
        ("pt-BR", ("Endpoints de webhook", "Registrar", "Segredo atual", "Ações")),
        ("en", ("Webhook endpoints", "Register", "Current secret", "Actions")),
    ],
)
def test_the_endpoints_page_speaks_the_browsers_language(
    client_for, endpoint, language: str, words: tuple[str, ...]
) -> None:
    client = client_for("admin")
    html = client.get("/webhooks/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert [word for word in words if word not in html] == []
    if language != "en":
        assert "Current secret" not in html and ">Actions<" not in html
