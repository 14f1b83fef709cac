"""Django admin for end users: read-only (changes go through users.services and the upstream)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from users.models import EndUser, EndUserTimelineEntry, KycReview


class ReadOnlyAdmin(admin.ModelAdmin):
    """Shows everything, changes nothing: the upstream is the source of these records."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class TimelineInline(admin.TabularInline):
    model = EndUserTimelineEntry
    fields = ("at", "kind", "event_type", "event_id", "actor", "summary", "applied")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-at",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReviewInline(admin.TabularInline):
    model = KycReview
    fields = ("at", "kind", "by", "verification_status", "text")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(EndUser)
class EndUserAdmin(ReadOnlyAdmin):
    list_display = (
        "email",
        "first_name",
        "last_name",
        "type",
        "country",
        "status",
        "verification_status",
        "environment",
        "upstream_id",
        "created_at",
    )
    list_filter = ("environment", "status", "verification_status", "type")
    list_select_related = ("environment",)
    search_fields = ("email", "first_name", "last_name", "upstream_id", "phone_number")
    date_hierarchy = "created_at"
    list_per_page = 50
    inlines = (ReviewInline, TimelineInline)


@admin.register(KycReview)
class KycReviewAdmin(ReadOnlyAdmin):
    list_display = ("at", "end_user", "kind", "by", "verification_status")
    list_filter = ("kind", "verification_status")
    list_select_related = ("end_user", "by")
    search_fields = ("end_user__email", "text", "by__email")
