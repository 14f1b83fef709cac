"""Admin of the emulator's tables, for local development and tests only (never in production)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin

from emulator.models import (
    ApiClient,
    ClockState,
    FaultSettings,
    IdempotencyRecord,
    Quote,
    WeeklyUsage,
)

if settings.PAYOPS_ENVIRONMENT in ("local", "test"):

    @admin.register(ApiClient)
    class ApiClientAdmin(admin.ModelAdmin):
        list_display = ("name", "client_id", "api_key_prefix", "rate_per_second", "created_at")
        search_fields = ("name", "client_id", "api_key_prefix")
        list_filter = ("created_at",)
        # The password and API key are hashes; neither is editable or shown in clear.
        exclude = ("password",)
        readonly_fields = ("client_id", "api_key_prefix", "api_key_digest", "created_at")

    @admin.register(Quote)
    class QuoteAdmin(admin.ModelAdmin):
        list_display = (
            "quote_id",
            "client",
            "environment",
            "base_currency",
            "quote_currency",
            "base_amount",
            "quote_amount",
            "status",
            "expires_at",
        )
        list_filter = ("environment", "status", "base_currency", "quote_currency", "source")
        search_fields = ("quote_id", "client__name")
        list_select_related = ("client",)

    @admin.register(IdempotencyRecord)
    class IdempotencyRecordAdmin(admin.ModelAdmin):
        list_display = ("key", "scope", "client", "environment", "status_code", "created_at")
        list_filter = ("environment", "status_code")
        search_fields = ("key", "scope")
        list_select_related = ("client",)

    @admin.register(WeeklyUsage)
    class WeeklyUsageAdmin(admin.ModelAdmin):
        list_display = ("client", "week", "count")
        list_filter = ("week",)
        search_fields = ("client__name",)

    @admin.register(ClockState)
    class ClockStateAdmin(admin.ModelAdmin):
        list_display = ("id", "offset_seconds", "updated_at")

    @admin.register(FaultSettings)
    class FaultSettingsAdmin(admin.ModelAdmin):
        list_display = (
            "latency_ms",
            "error_rate",
            "rate_429",
            "drop_webhooks",
            "drop_response_next",
        )

# --- domain admin (E2) ---
