"""Read-mostly admin of webhook data: events and deliveries are evidence, never edited here."""

from __future__ import annotations

from django.contrib import admin

from staff.admin import ReadOnlyAdmin
from webhooks.models import MissedEvent, WebhookDelivery, WebhookEndpoint, WebhookEvent


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(ReadOnlyAdmin):
    list_display = ("environment", "receiver_id", "secret_set_at", "registered_at")
    # Secrets are encrypted columns: never shown, not even encrypted.
    exclude = ("secret_encrypted", "previous_secret_encrypted", "pending_secret_encrypted")


@admin.register(WebhookEvent)
class WebhookEventAdmin(ReadOnlyAdmin):
    list_display = ("event_id", "event_type", "environment", "status", "received_at", "has_drift")
    list_filter = ("status", "event_type", "has_drift")
    search_fields = ("event_id", "object_ids")
    list_select_related = ("environment",)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = ("received_at", "endpoint", "verdict", "matched_secret", "response_status")
    list_filter = ("verdict", "matched_secret")
    list_select_related = ("endpoint__environment",)
    exclude = ("body",)


@admin.register(MissedEvent)
class MissedEventAdmin(ReadOnlyAdmin):
    list_display = ("detected_at", "environment", "object_kind", "upstream_id", "observed_state")
    list_select_related = ("environment",)
