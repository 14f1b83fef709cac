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


# Read-only views of the maker-checker and tracking records (changes go through the
# services and pages: the policy page publishes versions, approvals come from approvers).
from payouts.models import Approval, ApprovalPolicy, ApprovalRule, PayoutEvent  # noqa: E402


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class RuleInline(ReadOnlyInline):
    model = ApprovalRule
    fields = ("min_amount", "currency", "rail", "mode", "required_approvals")
    readonly_fields = fields


@admin.register(ApprovalPolicy)
class ApprovalPolicyAdmin(ReadOnlyAdmin):
    list_display = ("version", "default_required", "created_by", "created_at", "note")
    inlines = (RuleInline,)


@admin.register(Approval)
class ApprovalAdmin(ReadOnlyAdmin):
    list_display = ("payout", "approver", "round", "created_at", "voided_at")
    list_select_related = ("payout", "approver")


@admin.register(PayoutEvent)
class PayoutEventAdmin(ReadOnlyAdmin):
    list_display = ("received_at", "event_type", "upstream_id", "status", "source", "applied")
    list_filter = ("source", "applied", "status")
    search_fields = ("upstream_id", "event_id")
