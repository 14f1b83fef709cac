"""The emulator's user and virtual-account events, applied by the directory's real services."""

from __future__ import annotations

import pytest

from accounts.models import VirtualAccount
from gateway.client import call_sync, upstream
from tests.identity import stepped_up
from tests.webhooks.conftest import create_upstream_user
from users.models import EndUser
from webhooks.models import EventStatus, WebhookEvent, WebhookEventLink
from webhooks.services import webhook_endpoint_register

pytestmark = pytest.mark.django_db(transaction=True)


def test_user_and_account_events_reach_the_directory_and_link_back(
    live_emulator, emulated_sandbox, backoffice, demo_staff, settings, sync_tasks
) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = backoffice
    webhook_endpoint_register(environment=emulated_sandbox, by=stepped_up(demo_staff["admin"]))
    user = create_upstream_user(emulated_sandbox, "ada@example.com")
    live_emulator.control("POST", "webhooks/flush")
    account = call_sync(
        upstream(emulated_sandbox).virtual_accounts.create, user_id=user.user_id, mode="fiat"
    )
    live_emulator.advance(10)
    live_emulator.control("POST", "tick")
    live_emulator.control("POST", "webhooks/flush")

    events = dict(WebhookEvent.objects.values_list("event_type", "status"))
    assert events == {
        "user.created": EventStatus.PROCESSED,
        "user.verification.accepted": EventStatus.PROCESSED,
        "virtual_account.created": EventStatus.PROCESSED,
        "virtual_account.activated": EventStatus.PROCESSED,
    }
    end_user = EndUser.objects.get(environment=emulated_sandbox, upstream_id=user.user_id)
    assert end_user.verification_status == "verified"
    mirrored = VirtualAccount.objects.get(environment=emulated_sandbox, upstream_id=account.id)
    assert mirrored.status == "active"
    touched_user = WebhookEventLink.objects.get(
        event__event_type="user.verification.accepted", kind="user"
    )
    assert touched_user.touched and touched_user.object_pk == str(end_user.pk)
    account_link = WebhookEventLink.objects.get(
        event__event_type="virtual_account.activated", kind="virtual_account"
    )
    assert account_link.object_pk == str(mirrored.pk)


def test_events_replayed_out_of_order_leave_the_user_verified(
    live_emulator, emulated_sandbox, backoffice, demo_staff, settings, sync_tasks
) -> None:
    """The verification lands before the creation (the emulator's retries make this happen)."""
    from webhooks.services import webhook_event_process

    settings.WEBHOOKS_PUBLIC_BASE_URL = backoffice
    webhook_endpoint_register(environment=emulated_sandbox, by=stepped_up(demo_staff["admin"]))
    user = create_upstream_user(emulated_sandbox, "grace@example.com")
    live_emulator.control("POST", "webhooks/flush")

    for event in WebhookEvent.objects.order_by("-received_at"):
        webhook_event_process(event_pk=event.pk, trigger="reprocess")

    end_user = EndUser.objects.get(environment=emulated_sandbox, upstream_id=user.user_id)
    assert end_user.verification_status == "verified"
    assert not WebhookEvent.objects.exclude(status=EventStatus.PROCESSED).exists()


def test_the_event_page_links_to_the_touched_end_user(
    live_emulator, emulated_sandbox, backoffice, demo_staff, settings, sync_tasks, client_for
) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = backoffice
    webhook_endpoint_register(environment=emulated_sandbox, by=stepped_up(demo_staff["admin"]))
    user = create_upstream_user(emulated_sandbox, "linked@example.com")
    live_emulator.control("POST", "webhooks/flush")
    event = WebhookEvent.objects.get(event_type="user.created")
    end_user = EndUser.objects.get(environment=emulated_sandbox, upstream_id=user.user_id)

    html = client_for("compliance").get(f"/webhooks/events/{event.pk}/").content.decode()

    assert f'href="/end-users/{end_user.pk}/"' in html
