"""Read-only admin of quotes and the stored valid_* lists."""

from django.contrib import admin

from quotes.models import Quote, ValidChoices


@admin.register(Quote)
class QuoteAdmin(admin.ModelAdmin):
    list_display = ("upstream_id", "environment", "corridor", "base_amount", "status", "expires_at")
    list_filter = ("status", "environment", "quote_currency")
    search_fields = ("upstream_id",)
    list_select_related = ("environment",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ValidChoices)
class ValidChoicesAdmin(admin.ModelAdmin):
    list_display = ("environment", "name", "scope", "updated_at")
