"""Django admin for staff users (email logins) and the read-only audit trail."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from staff.models import ApiToken, AuditEntry, StaffUser


class StaffUserCreationForm(AdminUserCreationForm):
    class Meta:
        model = StaffUser
        fields = ("email",)
        field_classes: dict[str, Any] = {}

    def clean_email(self) -> str:
        email = str(self.cleaned_data["email"]).strip().lower()
        if StaffUser.objects.filter(email__iexact=email).exists():
            raise ValidationError("A staff user with this email already exists.")
        return email


class StaffUserChangeForm(UserChangeForm):
    class Meta:
        model = StaffUser
        fields = "__all__"
        field_classes: dict[str, Any] = {}


@admin.register(StaffUser)
class StaffUserAdmin(UserAdmin):
    form = StaffUserChangeForm
    add_form = StaffUserCreationForm
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Personal info", {"fields": ("full_name",)}),
        (
            "Roles and permissions",
            {
                "fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions"),
                "description": "Roles are the groups; their permissions are declared in "
                "staff/roles.py and restored by `manage.py payops_bootstrap`.",
            },
        ),
        ("Important dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = (
        (
            None,
            {
                "classes": ("wide",),
                "fields": ("email", "usable_password", "password1", "password2"),
            },
        ),
    )
    list_display = ("email", "full_name", "role_names", "is_active", "is_staff", "last_login")
    list_filter = ("is_active", "is_staff", "is_superuser", "groups")
    search_fields = ("email", "full_name")
    ordering = ("email",)
    readonly_fields = ("last_login", "date_joined")
    filter_horizontal = ("groups", "user_permissions")

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).prefetch_related("groups")

    @admin.display(description="Roles")
    def role_names(self, obj: StaffUser) -> str:
        return ", ".join(sorted(group.name for group in obj.groups.all())) or "—"


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records that are evidence (the audit trail, webhook deliveries): shown, never edited."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    """The audit trail is evidence: it can be read and searched here, never changed."""

    list_display = ("at", "actor", "action", "target_type", "target_id")
    list_filter = ("action", "target_type", ("at", admin.DateFieldListFilter))
    search_fields = ("action", "actor__email", "target_id")
    date_hierarchy = "at"
    list_select_related = ("actor",)
    readonly_fields = ("at", "actor", "action", "target_type", "target_id", "details")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Read-only: tokens are created and revoked by their owners (profile page, command)."""

    list_display = ("name", "user", "prefix", "created_at", "last_used_at", "revoked_at")
    list_select_related = ("user",)
    search_fields = ("name", "user__email", "prefix")
    readonly_fields = ("user", "name", "prefix", "created_at", "last_used_at", "revoked_at")
    exclude = ("token_hash",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
