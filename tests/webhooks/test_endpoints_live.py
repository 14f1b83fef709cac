"""Registration and rotation against the emulator over HTTP, and deliveries that lose nothing."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from emulator.models import WebhookRegistration
from staff.changes import changes_apply_due
from staff.models import AuditEntry, ChangeProposal
from tests.identity import stepped_up
from tests.webhooks.conftest import create_upstream_user
from webhooks.models import SecretSlot, WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services import webhook_endpoint_register, webhook_secret_rotate

pytestmark = pytest.mark.django_db(transaction=True)


def _emulator_event_ids(live_emulator) -> set[str]:
    deliveries = live_emulator.control("GET", "webhooks/deliveries")["deliveries"]
    return {d["event_id"] for d in deliveries}


def test_register_sends_the_receiver_url_and_a_strong_secret(
    emulated_sandbox, demo_staff, settings
) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = "https://payops.example.com"

    result = webhook_endpoint_register(
        environment=emulated_sandbox, by=stepped_up(demo_staff["admin"])
    )

    endpoint = WebhookEndpoint.objects.get()
    registration = WebhookRegistration.objects.get()
    assert registration.webhook_url == result.url
    assert result.url == f"https://payops.example.com/webhooks/in/{endpoint.receiver_id}/"
    assert registration.secret == endpoint.secret
    assert endpoint.secret.startswith("whsec_") and len(endpoint.secret) >= 40
    assert endpoint.secret not in endpoint.secret_encrypted  # encrypted at rest
    entry = AuditEntry.objects.get(action="webhooks.registered")
    assert endpoint.secret not in json.dumps(entry.details)


def test_rotation_keeps_the_previous_secret_for_the_window_and_is_audited(
    emulated_sandbox, demo_staff, settings
) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = "https://payops.example.com"
    webhook_endpoint_register(environment=emulated_sandbox, by=stepped_up(demo_staff["admin"]))
    first = WebhookEndpoint.objects.get().secret

    result = webhook_secret_rotate(environment=emulated_sandbox, by=stepped_up(demo_staff["admin"]))

    endpoint = WebhookEndpoint.objects.get()
    assert result.rotated
    assert endpoint.secret != first and endpoint.previous_secret == first
    assert endpoint.previous_accepted()
    assert WebhookRegistration.objects.get().secret == endpoint.secret
    assert AuditEntry.objects.filter(action="webhooks.secret_rotated").count() == 1


def test_staff_without_the_permission_cannot_rotate(emulated_sandbox, demo_staff) -> None:
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        webhook_secret_rotate(environment=emulated_sandbox, by=demo_staff["compliance"])


def test_show_json_prints_exactly_url_secret_and_previous(emulated_sandbox, settings) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = "https://payops.example.com"
    call_command("webhooks", "register", "--environment", emulated_sandbox.name, stdout=StringIO())
    out = StringIO()

    call_command("webhooks", "show", "--environment", emulated_sandbox.name, "--json", stdout=out)
    shown = json.loads(out.getvalue())
    endpoint = WebhookEndpoint.objects.get()
    assert shown == {
        "url": f"https://payops.example.com/webhooks/in/{endpoint.receiver_id}/",
        "secret": endpoint.secret,
        "previous_secret": None,
    }

    call_command("webhooks", "rotate", "--environment", emulated_sandbox.name, stdout=StringIO())
    out = StringIO()
    call_command("webhooks", "show", "--environment", emulated_sandbox.name, "--json", stdout=out)
    rotated = json.loads(out.getvalue())
    assert list(rotated) == ["url", "secret", "previous_secret"]
    assert rotated["previous_secret"] == shown["secret"] != rotated["secret"]
    assert AuditEntry.objects.filter(action="webhooks.secrets_revealed").count() == 2


def test_emulator_deliveries_across_a_rotation_are_all_stored(
    live_emulator, emulated_sandbox, backoffice, demo_staff, settings
) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = backoffice
    webhook_endpoint_register(environment=emulated_sandbox, by=stepped_up(demo_staff["admin"]))
    create_upstream_user(emulated_sandbox, "before@example.com")  # queued, old secret

    webhook_secret_rotate(environment=emulated_sandbox, by=stepped_up(demo_staff["admin"]))
    create_upstream_user(emulated_sandbox, "after@example.com")  # queued, new secret
    live_emulator.control("POST", "webhooks/flush")

    sent = _emulator_event_ids(live_emulator)
    deliveries = live_emulator.control("GET", "webhooks/deliveries")["deliveries"]
    assert len(sent) >= 4  # user.created + verification for each user
    assert all(d["status_code"] == 200 for d in deliveries)
    stored = set(WebhookEvent.objects.values_list("event_id", flat=True))
    assert stored == sent
    slots = set(WebhookDelivery.objects.values_list("matched_secret", flat=True))
    assert slots == {SecretSlot.PREVIOUS, SecretSlot.CURRENT}


def test_sandbox_test_event_button_delivers_a_signed_event(
    live_emulator, emulated_sandbox, backoffice, client_for, settings
) -> None:
    settings.WEBHOOKS_PUBLIC_BASE_URL = backoffice
    admin = client_for("admin")
    assert admin.post(f"/webhooks/endpoints/{emulated_sandbox.pk}/register/").status_code == 302
    # Registering is an admin change (staff.changes): the demo's only admin waits it out.
    proposal = ChangeProposal.objects.get(kind="webhooks.endpoint")
    assert changes_apply_due(now=proposal.apply_after) == 1
    assert "Send test event" in admin.get("/webhooks/").content.decode()

    response = admin.post(f"/sandbox/webhooks/{emulated_sandbox.pk}/test-event/")

    assert response.status_code == 302 and response.url == "/webhooks/events/"
    event = WebhookEvent.objects.get(event_type="card_payment")
    assert event.data["reference"] == "payops-test-event"
    assert WebhookDelivery.objects.get(event=event).matched_secret == SecretSlot.CURRENT
    assert AuditEntry.objects.filter(action="webhooks.test_event_sent").exists()
    assert (
        client_for("compliance")
        .post(f"/sandbox/webhooks/{emulated_sandbox.pk}/test-event/")
        .status_code
        == 403
    )
