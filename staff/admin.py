"""Django admin for staff users (email logins), roles' groups and the read-only audit trail;
changing what someone may do here (roles, permissions, activation) needs a fresh second factor
and is audited with its before and after, as are adding and deleting users and groups
(StepUpAccessAdmin)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ValidationError
from django.db import transaction
from django.forms import ModelForm
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.translation import gettext, gettext_lazy
from django_otp.plugins.otp_totp.models import TOTPDevice

from staff.actions import record_action  # no live page for these records: announce=False
from staff.change_kinds import access_change_propose, group_change_propose
from staff.changes import proposal_message
from staff.errors import ServiceError
from staff.middleware import step_up_url
from staff.models import ApiToken, AuditEntry, ChangeProposal, StaffUser
from staff.roles import ROLE_GRANT_ACTION, role_names_of
from staff.second_factor.models import AuthenticatorDevice
from staff.step_up import StepUpRequired, step_up_fresh, step_up_minutes

# Changing what someone may do in the Django admin is a role grant: step-up `role.grant`, audited
# with the before and after (StepUpAccessAdmin).
_ACCESS_BEFORE = "_payops_access_before"
_ACCESS_PROPOSED = "_payops_access_proposed"


def _permission_names(permissions: Any) -> list[str]:
    rows = permissions.select_related("content_type")
    return sorted(f"{p.content_type.app_label}.{p.codename}" for p in rows)


def access_of(user: StaffUser) -> dict[str, Any]:
    """What a staff user may do, as the audit keeps it: flags, groups, direct permissions."""
    return {
        "is_active": user.is_active,
        "is_superuser": user.is_superuser,
        "is_staff": user.is_staff,
        "groups": role_names_of(user),
        "user_permissions": _permission_names(user.user_permissions),
    }


class StepUpAccessAdmin(admin.ModelAdmin):
    """A change form whose `access_fields` decide what people may do: changing one is refused on
    the form (with a link to the step-up prompt; nothing is saved, what was typed stays) unless
    the admin verified a second factor within PAYOPS_STEP_UP_MINUTES, and a saved change is
    audited as `access_audit_action` with `access_of` before and after, in the admin's one
    transaction. Other fields save as usual. Adding and deleting a record are audited too
    (`<access_audit_prefix>.created_in_admin`, `.deleted_in_admin`), with what it allowed."""

    access_fields: frozenset[str] = frozenset()
    access_audit_action = ""
    access_audit_prefix = ""

    def access_of(self, obj: Any) -> dict[str, Any]:
        raise NotImplementedError

    def access_changed(self, form: ModelForm) -> bool:
        return bool(self.access_fields & set(form.changed_data))

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        base = super().get_form(request, obj, change=change, **kwargs)
        if obj is None:
            return base  # a new record: nobody holds it yet (a new user gets roles on change)
        changed = self.access_changed

        def clean(form: ModelForm) -> dict[str, Any] | None:
            cleaned = base.clean(form)
            if changed(form) and not step_up_fresh(request.user):
                raise ValidationError(
                    format_html(
                        "Changing roles or permissions needs a second factor verified in the "
                        'last {} minutes: <a href="{}">confirm it is you</a>, then save again.',
                        step_up_minutes(),
                        step_up_url(request.get_full_path()),
                    ),
                    code="step_up_required",
                )
            return cleaned

        return type(base.__name__, (base,), {"clean": clean})

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change and self.access_changed(form):
            # The form checked it; this holds the rule for any other way into this method.
            if not step_up_fresh(request.user):
                raise StepUpRequired(ROLE_GRANT_ACTION)
            before = self.access_of(type(obj)._default_manager.get(pk=obj.pk))
            setattr(form, _ACCESS_BEFORE, before)
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """Many-to-many fields are saved here: audit the change once they are."""
        super().save_related(request, form, formsets, change)
        if not change:
            record_action(
                actor=request.user,  # type: ignore[arg-type]
                action=f"{self.access_audit_prefix}.created_in_admin",
                target=form.instance,
                before={},
                after=self.access_of(form.instance),
                announce=False,
            )
            return
        before = getattr(form, _ACCESS_BEFORE, None)
        if before is None:
            return
        after = self.access_of(form.instance)
        if after != before:
            record_action(
                actor=request.user,  # type: ignore[arg-type]
                action=self.access_audit_action,
                target=form.instance,
                details={"before": before, "after": after},
                before=before,
                after=after,
                announce=False,
            )

    def _audit_deletion(self, request: HttpRequest, obj: Any) -> None:
        record_action(
            actor=request.user,  # type: ignore[arg-type]
            action=f"{self.access_audit_prefix}.deleted_in_admin",
            target=obj,
            details={"name": str(obj)},
            before=self.access_of(obj),
            after={},
            announce=False,
        )

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        with transaction.atomic():
            self._audit_deletion(request, obj)
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        with transaction.atomic():
            for obj in queryset:
                self._audit_deletion(request, obj)
            super().delete_queryset(request, queryset)


class StaffUserCreationForm(AdminUserCreationForm):
    class Meta:
        model = StaffUser
        fields = ("email",)
        field_classes: dict[str, Any] = {}

    def clean_email(self) -> str:
        email = str(self.cleaned_data["email"]).strip().lower()
        if StaffUser.objects.filter(email__iexact=email).exists():
            raise ValidationError(gettext("A staff user with this email already exists."))
        return email


class StaffUserChangeForm(UserChangeForm):
    class Meta:
        model = StaffUser
        fields = "__all__"
        field_classes: dict[str, Any] = {}


@admin.register(StaffUser)
class StaffUserAdmin(StepUpAccessAdmin, UserAdmin):
    form = StaffUserChangeForm
    add_form = StaffUserCreationForm
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        (gettext_lazy("Personal info"), {"fields": ("full_name",)}),
        (
            gettext_lazy("Roles and permissions"),
            {
                "fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions"),
                "description": gettext_lazy(
                    "Roles are the groups; their permissions are declared in "
                    "staff/roles.py and restored by `manage.py payops_bootstrap`."
                ),
            },
        ),
        (gettext_lazy("Important dates"), {"fields": ("last_login", "date_joined")}),
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

    # Roles are the groups: changing these is a role grant (StepUpAccessAdmin).
    # Activating or deactivating someone decides whether they may do anything at all.
    access_fields = frozenset(
        {"is_active", "is_superuser", "is_staff", "groups", "user_permissions"}
    )
    access_audit_action = "role.changed_in_admin"
    access_audit_prefix = "staff"

    def access_of(self, obj: Any) -> dict[str, Any]:
        return access_of(obj)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """A change of access is an admin change (staff.changes): proposed here, applied once
        another admin approves it; the form's other fields save as usual."""
        if not (change and self.access_changed(form)):
            super().save_model(request, obj, form, change)
            return
        if not step_up_fresh(request.user):
            raise StepUpRequired(ROLE_GRANT_ACTION)
        current = StaffUser.objects.get(pk=obj.pk)
        data = form.cleaned_data
        after = {
            "is_active": bool(data.get("is_active", current.is_active)),
            "is_superuser": bool(data.get("is_superuser", current.is_superuser)),
            "is_staff": bool(data.get("is_staff", current.is_staff)),
            "groups": sorted(group.name for group in data.get("groups", current.groups.all())),
            "user_permissions": _permission_names(
                Permission.objects.filter(pk__in=[p.pk for p in data.get("user_permissions", [])])
            ),
        }
        # Nothing of the access is saved now: the flags keep their values, the m2m are skipped.
        obj.is_active = current.is_active
        obj.is_superuser, obj.is_staff = current.is_superuser, current.is_staff
        setattr(form, _ACCESS_PROPOSED, after)
        admin.ModelAdmin.save_model(self, request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        after = getattr(form, _ACCESS_PROPOSED, None)
        if after is None:
            super().save_related(request, form, formsets, change)
            return
        for name in ("groups", "user_permissions"):
            form.cleaned_data.pop(name, None)
        admin.ModelAdmin.save_related(self, request, form, formsets, change)
        try:
            proposal = access_change_propose(
                user=form.instance,
                by=request.user,  # type: ignore[arg-type]
                after=after,
            )
        except ServiceError as exc:
            self.message_user(request, exc.as_message(), level=messages.ERROR)
        else:
            self.message_user(request, proposal_message(proposal), level=messages.WARNING)

    @admin.display(description=gettext_lazy("Roles"))
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


admin.site.unregister(Group)


@admin.register(Group)
class RoleGroupAdmin(StepUpAccessAdmin, GroupAdmin):
    """A role's group: changing its permissions (or its name, which is the role's key) changes
    what everyone holding the role may do, so it is a role grant too. `roles_sync` restores the
    declared permissions on every migrate and bootstrap (staff/roles.py)."""

    access_fields = frozenset({"name", "permissions"})
    access_audit_action = "role.group_changed_in_admin"
    access_audit_prefix = "role.group"

    def access_of(self, obj: Any) -> dict[str, Any]:
        return {"name": obj.name, "permissions": _permission_names(obj.permissions)}

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """A change of a role's group is an admin change (staff.changes): proposed, not saved."""
        if not (change and self.access_changed(form)):
            super().save_model(request, obj, form, change)
            return
        if not step_up_fresh(request.user):
            raise StepUpRequired(ROLE_GRANT_ACTION)
        data = form.cleaned_data
        after = {
            "name": str(data.get("name", obj.name)),
            "permissions": _permission_names(
                Permission.objects.filter(pk__in=[p.pk for p in data.get("permissions", [])])
            ),
        }
        setattr(form, _ACCESS_PROPOSED, after)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        after = getattr(form, _ACCESS_PROPOSED, None)
        if after is None:
            super().save_related(request, form, formsets, change)
            return
        group = Group.objects.get(pk=form.instance.pk)
        form.instance.name = group.name  # the page after saving shows what is in force
        try:
            proposal = group_change_propose(
                group=group,
                by=request.user,  # type: ignore[arg-type]
                after=after,
            )
        except ServiceError as exc:
            self.message_user(request, exc.as_message(), level=messages.ERROR)
        else:
            self.message_user(request, proposal_message(proposal), level=messages.WARNING)


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    """The audit trail is evidence: it can be read and searched here, never changed."""

    list_display = ("at", "actor", "action", "target_type", "target_id")
    list_filter = ("action", "target_type", ("at", admin.DateFieldListFilter))
    search_fields = ("action", "actor__email", "target_id")
    date_hierarchy = "at"
    list_select_related = ("actor",)
    readonly_fields = (
        "seq",
        "at",
        "actor",
        "action",
        "target_type",
        "target_id",
        "details",
        "before",
        "after",
        "prev_hash",
        "entry_hash",
    )


@admin.register(ChangeProposal)
class ChangeProposalAdmin(ReadOnlyAdmin):
    """Admin changes are decided on the Changes page (staff.changes); here they are only read."""

    list_display = ("proposed_at", "kind", "summary", "state", "proposed_by", "decided_by")
    list_filter = ("state", "kind")
    search_fields = ("summary", "proposed_by__email", "target_label")
    list_select_related = ("proposed_by", "decided_by")
    exclude = ("payload",)  # what applying needs (secrets encrypted): not for reading


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


# django-otp's TOTPDevice keeps its seed in plain hex: PayOps' authenticator apps are
# AuthenticatorDevice (seed encrypted, ADR 0017); the old model stays installed but unused, and
# its admin (which could add a plaintext device) is taken away.
if admin.site.is_registered(TOTPDevice):
    admin.site.unregister(TOTPDevice)


@admin.register(AuthenticatorDevice)
class AuthenticatorDeviceAdmin(ReadOnlyAdmin):
    """Who has which authenticator app; never its seed (not a field here, not decrypted).
    Devices are added by enrolment and removed by their owner or an admin reset (both audited)."""

    list_display = ("user", "name", "confirmed", "created_at", "last_used_at")
    list_filter = ("confirmed",)
    list_select_related = ("user",)
    search_fields = ("user__email", "name")
    fields = ("user", "name", "confirmed", "created_at", "last_used_at")
    readonly_fields = fields
