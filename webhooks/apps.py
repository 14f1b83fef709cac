"""App configuration for webhooks: its schedules, readiness warnings and dashboard panel."""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.http import HttpRequest
from django.utils.translation import gettext_lazy


def dashboard_context(request: HttpRequest) -> dict[str, Any]:
    from datetime import timedelta

    from django.utils import timezone

    from webhooks.models import EventStatus, MissedEvent, WebhookEvent
    from webhooks.services.gaps import drift_summary, receivers_missing, silences

    week = timezone.now() - timedelta(days=7)
    return {
        "receivers_missing": receivers_missing(),
        "silences": silences(),
        "drift": drift_summary(since=week),
        "failed": WebhookEvent.objects.filter(status=EventStatus.FAILED).count(),
        "missed": MissedEvent.objects.filter(detected_at__gte=week).count(),
    }


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from staff.audit_actions import register_audit_actions
        from webhooks.audit_actions import AUDIT_ACTION_LABELS

        # What people read for this app's audit actions (the audit pages).
        register_audit_actions(AUDIT_ACTION_LABELS)
        from django_q.signals import post_spawn

        from console.dashboard import DashboardPanel, register_panel
        from console.health import register_check
        from console.metrics import register_metrics
        from console.schedules import register_schedule
        from staff.crypto import register_encrypted_fields
        from webhooks.contract import PAYMENT_LINK
        from webhooks.handlers import register_event_handler
        from webhooks.health import receivers_check, silence_check
        from webhooks.links import payment_link_event_record
        from webhooks.models import WebhookEndpoint
        from webhooks.permissions import WEBHOOK_EVENTS_VIEW
        from webhooks.selectors import lag_metrics
        from webhooks.services.endpoint_changes import register_webhook_change_kinds
        from webhooks.services.processor import webhook_processor_start
        from webhooks.tasks import webhook_deliveries_prune_task, webhook_events_retry_due_task

        # Registration and secret rotation are admin changes (staff.changes).
        register_webhook_change_kinds()
        register_encrypted_fields(
            WebhookEndpoint,
            "secret_encrypted",
            "previous_secret_encrypted",
            "pending_secret_encrypted",
        )
        # Payment-link events have no owning app: webhooks records them itself.
        register_event_handler(PAYMENT_LINK, payment_link_event_record)
        # Warnings, not failures (docs/console.md): the process still serves.
        register_check(
            "webhook_receivers", receivers_check, label=gettext_lazy("Webhook receivers")
        )
        register_check("webhook_silence", silence_check, label=gettext_lazy("Webhook silence"))
        register_metrics("webhooks.lag", lag_metrics)

        register_panel(
            DashboardPanel(
                "webhooks.health",
                "webhooks/includes/dashboard_panel.html",
                permission=WEBHOOK_EVENTS_VIEW,
                context=dashboard_context,
            )
        )
        # Every task worker process runs an event processor thread (ADR 0024).
        post_spawn.connect(webhook_processor_start, dispatch_uid="webhooks.processor_start")
        # Failed and handler-less events come back here with their backoff; nothing is dropped.
        register_schedule("webhooks.retry_due", webhook_events_retry_due_task, minutes=1)
        register_schedule(
            "webhooks.prune_deliveries",
            webhook_deliveries_prune_task,
            every="daily",
        )
