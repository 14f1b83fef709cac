"""The webhooks API: same services and permissions as the pages, one error shape."""

from __future__ import annotations

import pytest

from tests.webhooks.conftest import CURRENT, new_event
from webhooks.models import EventStatus, ReprocessRun, WebhookEvent

pytestmark = pytest.mark.django_db


def test_event_list_and_detail(client_for, post_signed) -> None:
    payload = new_event("user.created", user_id="u-api")
    post_signed(payload)
    client = client_for("compliance")

    listed = client.get("/api/v1/webhooks/events", {"q": "u-api"}).json()
    assert [e["event_id"] for e in listed] == [payload["data"]["event_id"]]
    detail = client.get(f"/api/v1/webhooks/events/{listed[0]['id']}").json()
    assert detail["payload"] == payload
    assert detail["deliveries"][0]["matched_secret"] == "current"
    assert detail["links"] == [
        {"kind": "user", "upstream_id": "u-api", "model": None, "object_id": None, "touched": False}
    ]


@pytest.mark.parametrize(
    ("role", "status"),
    [("finance_maker", 403), ("finance_approver", 200), ("compliance", 200), ("admin", 200)],
)
def test_event_list_by_role(client_for, endpoint, role, status) -> None:
    response = client_for(role).get("/api/v1/webhooks/events")

    assert response.status_code == status
    if status == 403:
        assert response.json()["code"] == "permission_denied"


@pytest.mark.parametrize(
    ("role", "status"),
    [("finance_maker", 403), ("finance_approver", 403), ("compliance", 403), ("admin", 200)],
)
def test_reprocess_failed_by_role(client_for, endpoint, role, status) -> None:
    WebhookEvent.objects.create(
        environment=endpoint.environment,
        event_id="evt_f",
        event_type="user.created",
        payload=new_event("user.created"),
        status=EventStatus.FAILED,
    )

    response = client_for(role).post(
        "/api/v1/webhooks/events/reprocess", {"status": "failed"}, content_type="application/json"
    )

    assert response.status_code == status
    assert ReprocessRun.objects.count() == (1 if status == 200 else 0)
    if status == 200:
        assert response.json()["total"] == 1


def test_endpoints_are_masked_and_admin_only(client_for, endpoint) -> None:
    admin = client_for("admin").get("/api/v1/webhooks/endpoints")
    assert admin.status_code == 200
    assert CURRENT not in admin.content.decode()
    assert admin.json()[0]["secret_masked"].endswith(CURRENT[-4:])
    assert client_for("compliance").get("/api/v1/webhooks/endpoints").status_code == 403


def test_rotation_without_a_public_url_is_a_400_on_the_field(
    client_for, endpoint, settings
) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = "ftp://nowhere"

    response = client_for("admin").post(
        f"/api/v1/webhooks/endpoints/{endpoint.environment.pk}/rotate"
    )

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "base_url"


def test_unknown_event_is_404_in_the_error_shape(client_for, endpoint) -> None:
    response = client_for("admin").get("/api/v1/webhooks/events/999999")

    assert response.status_code == 404
    assert set(response.json()) == {"code", "message", "errors"}
