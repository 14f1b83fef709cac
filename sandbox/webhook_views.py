"""Sandbox-only staff action: have the emulator send a signed test event to a sandbox receiver."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from gateway.models import Environment, EnvironmentKind
from sandbox.control import EmulatorControl, EmulatorControlError
from staff.audit import audit_record
from staff.roles import WEBHOOKS_MANAGE

TEST_EVENT = "card_payment"


@login_required
@permission_required(WEBHOOKS_MANAGE, raise_exception=True)
@require_POST
def webhook_test_event_send(request: HttpRequest, environment_pk: int) -> HttpResponse:
    """A `card_payment` (an event no API call produces) signed by the emulator, delivered now.

    It goes through the whole path a real event takes: the emulator signs it with the registered
    secret and posts it to the registered URL; the event log shows it when it arrives.
    """
    environment = get_object_or_404(Environment, pk=environment_pk, kind=EnvironmentKind.SANDBOX)
    data = {
        "payment_link_id": str(uuid.uuid4()),
        "client_uuid": environment.client_id,
        "reference": "payops-test-event",
        "status": "completed",
    }
    try:
        with EmulatorControl(environment.base_url, settings.EMULATOR_CONTROL_TOKEN) as control:
            queued = control.emit_event(
                client_id=environment.client_id, event=TEST_EVENT, data=data
            )
            control.flush_webhooks()
    except EmulatorControlError as exc:
        messages.error(request, f"The emulator refused the test event: {exc}")
        return redirect("webhooks:endpoints")
    with transaction.atomic():
        audit_record(
            actor=request.user,  # type: ignore[arg-type]
            action="webhooks.test_event_sent",
            target=environment,
            details={"event": TEST_EVENT, "event_id": queued.get("event_id", "")},
        )
    messages.success(
        request, f"Test event {queued.get('event_id', '')} sent to {environment.name}."
    )
    return redirect("webhooks:events")
