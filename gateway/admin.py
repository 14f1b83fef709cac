"""Django admin for the gateway: environments (masked credentials), staff choices, call log."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy

from gateway.models import Environment, StaffEnvironmentChoice, UpstreamCall


@admin.register(Environment)
class EnvironmentAdmin(admin.ModelAdmin):
    """
    Read-only here: environments are created and edited on the Environments page, whose services
    encrypt credentials and write the audit trail. The admin never shows a decrypted value.
    """

    list_display = (
        "name",
        "kind",
        "base_url",
        "is_active",
        "masked_client_id",
        "masked_api_key",
        "weekly_budget",
        "updated_at",
    )
    list_filter = ("kind", "is_active")
    search_fields = ("name", "base_url")
    fields = (
        "name",
        "kind",
        "base_url",
        "masked_client_id",
        "masked_password",
        "masked_api_key",
        "rate_per_second",
        "max_concurrent",
        "weekly_budget",
        "background_share",
        "is_active",
        "created_at",
        "updated_at",
        "edit_link",
    )
    readonly_fields = fields

    @admin.display(description=gettext_lazy("Client ID"))
    def masked_client_id(self, obj: Environment) -> str:
        return obj.credential_masked("client_id")

    @admin.display(description=gettext_lazy("Password"))
    def masked_password(self, obj: Environment) -> str:
        return obj.credential_masked("password")

    @admin.display(description=gettext_lazy("API key"))
    def masked_api_key(self, obj: Environment) -> str:
        return obj.credential_masked("api_key")

    @admin.display(description=gettext_lazy("Edit"))
    def edit_link(self, obj: Environment) -> SafeString:
        url = reverse("gateway:environment_edit", args=[obj.pk])
        return format_html('<a href="{}">Edit on the Environments page</a>', url)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(StaffEnvironmentChoice)
class StaffEnvironmentChoiceAdmin(admin.ModelAdmin):
    list_display = ("user", "environment", "chosen_at")
    list_filter = ("environment",)
    search_fields = ("user__email", "environment__name")
    list_select_related = ("user", "environment")
    readonly_fields = ("user", "environment", "chosen_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(UpstreamCall)
class UpstreamCallAdmin(admin.ModelAdmin):
    """The call log as written by the gateway (bodies redacted at write time); never edited."""

    list_display = (
        "created_at",
        "environment",
        "method",
        "path",
        "status",
        "duration_ms",
        "attempt",
        "priority",
        "error_code",
    )
    list_filter = ("environment", "method", "priority", "status")
    search_fields = ("path", "operation", "idempotency_key", "error_code")
    list_select_related = ("environment",)
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
