"""Django admin for virtual accounts, deposits and recipients: read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from accounts.models import Deposit, Recipient, VirtualAccount
from users.admin import ReadOnlyAdmin


class DepositInline(admin.TabularInline):
    model = Deposit
    fields = ("received_at", "amount", "currency", "payment_rail", "sender_name", "deposit_id")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(VirtualAccount)
class VirtualAccountAdmin(ReadOnlyAdmin):
    list_display = (
        "upstream_id",
        "end_user",
        "mode",
        "status",
        "available_balance",
        "currency",
        "balance_as_of",
        "environment",
    )
    list_filter = ("environment", "status", "mode")
    list_select_related = ("end_user", "environment")
    search_fields = ("upstream_id", "account_number", "end_user__email")
    list_per_page = 50
    inlines = (DepositInline,)


@admin.register(Deposit)
class DepositAdmin(ReadOnlyAdmin):
    list_display = ("received_at", "virtual_account", "amount", "currency", "deposit_id")
    list_select_related = ("virtual_account",)
    search_fields = ("deposit_id", "virtual_account__upstream_id", "sender_name")


@admin.register(Recipient)
class RecipientAdmin(ReadOnlyAdmin):
    list_display = (
        "__str__",
        "kind",
        "end_user",
        "account_type",
        "country",
        "status",
        "created_by",
        "environment",
        "created_at",
    )
    list_filter = ("environment", "status", "account_type", "kind", "country")
    list_select_related = ("end_user", "created_by", "environment")
    search_fields = ("first_name", "last_name", "company_name", "email", "upstream_id")
    exclude = ("account_number",)  # shown masked in the list, never in full
    list_per_page = 50
