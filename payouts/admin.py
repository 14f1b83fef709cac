"""Read-mostly admin of payouts, their documents and timelines (writes go through services)."""

from django.contrib import admin

from payouts.models import Payout, PayoutDocument, PayoutStatusChange


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class DocumentInline(ReadOnlyInline):
    model = PayoutDocument
    fields = ("file_name", "kind", "content_type", "size", "sha256", "uploaded_by", "uploaded_at")
    readonly_fields = fields


class StatusChangeInline(ReadOnlyInline):
    model = PayoutStatusChange
    fields = ("at", "from_status", "to_status", "source", "by", "reason")
    readonly_fields = fields


@admin.register(Payout)
class PayoutAdmin(admin.ModelAdmin):
    list_display = (
        "pk",
        "environment",
        "maker",
        "amount",
        "currency",
        "mode",
        "status",
        "created_at",
    )
    list_filter = ("status", "mode", "environment")
    search_fields = ("upstream_id", "reference")
    list_select_related = ("environment", "maker")
    inlines = (DocumentInline, StatusChangeInline)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
