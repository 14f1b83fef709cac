"""Admin of the emulator's tables, registered only where the emulator is installed (ADR 0007)."""

from __future__ import annotations

from django.contrib import admin

from emulator.models import (
    ApiClient,
    ClockState,
    DeliveryAttempt,
    EmulatedUser,
    FaultSettings,
    IdempotencyRecord,
    MailboxMessage,
    OtpCode,
    Payout,
    Quote,
    Recipient,
    VirtualAccount,
    WebhookDelivery,
    WebhookEvent,
    WebhookRegistration,
    WeeklyUsage,
)


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
        "error_next",
    )


# --- the domain: users, accounts, recipients, payouts, webhooks ---


@admin.register(EmulatedUser)
class EmulatedUserAdmin(admin.ModelAdmin):
    list_display = ("email", "client", "environment", "status", "verification_status")
    list_filter = ("environment", "status", "verification_status", "type")
    search_fields = ("user_id", "email", "first_name", "last_name")
    list_select_related = ("client",)


@admin.register(VirtualAccount)
class VirtualAccountAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "environment", "mode", "status", "balance", "currency")
    list_filter = ("environment", "mode", "status")
    search_fields = ("id", "account_number", "user__email")
    list_select_related = ("user",)


@admin.register(Recipient)
class RecipientAdmin(admin.ModelAdmin):
    list_display = ("recipient_id", "user", "environment", "account_type", "currency")
    list_filter = ("environment", "account_type")
    search_fields = ("recipient_id", "first_name", "last_name", "company_name", "email")
    list_select_related = ("user",)


@admin.register(Payout)
class PayoutAdmin(admin.ModelAdmin):
    list_display = (
        "payout_id",
        "client",
        "environment",
        "mode",
        "status",
        "amount",
        "total_fees",
        "payment_method",
        "created_at",
    )
    list_filter = ("environment", "mode", "status", "payment_method")
    search_fields = ("payout_id", "reference", "quote_id")
    list_select_related = ("client",)


@admin.register(OtpCode)
class OtpCodeAdmin(admin.ModelAdmin):
    list_display = ("email", "environment", "expires_at", "failed_attempts", "consumed_at")
    list_filter = ("environment", "superseded")
    search_fields = ("email",)
    exclude = ("code_digest",)


@admin.register(MailboxMessage)
class MailboxMessageAdmin(admin.ModelAdmin):
    list_display = ("email", "environment", "subject", "code", "created_at")
    list_filter = ("environment",)
    search_fields = ("email", "subject")


@admin.register(WebhookRegistration)
class WebhookRegistrationAdmin(admin.ModelAdmin):
    list_display = ("client", "environment", "webhook_url", "rotated_at", "updated_at")
    list_filter = ("environment",)
    search_fields = ("webhook_url", "client__name")
    # Signing secrets are never shown.
    exclude = ("secret", "previous_secret")
    list_select_related = ("client",)


@admin.register(WebhookEvent)
class WebhookEventAdmin(admin.ModelAdmin):
    list_display = ("event_id", "event", "client", "environment", "created_at")
    list_filter = ("environment", "event")
    search_fields = ("event_id", "event")
    list_select_related = ("client",)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ("event", "status", "attempts", "next_attempt_at", "lease_until")
    list_filter = ("status",)
    search_fields = ("event__event_id",)
    # Signing secrets are never shown.
    exclude = ("signing_secret",)
    list_select_related = ("event",)


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(admin.ModelAdmin):
    list_display = (
        "event_id",
        "event",
        "url",
        "attempt",
        "status_code",
        "outcome",
        "secret_slot",
        "secret_fingerprint",
        "at",
    )
    list_filter = ("outcome", "secret_slot", "event")
    search_fields = ("event_id", "url")
