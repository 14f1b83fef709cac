"""Staff's own admin changes (staff.changes): role grants, access changed in the Django admin,
and second-factor resets. Registered from StaffConfig.ready()."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.contrib.auth.models import Group, Permission
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy

from staff.actions import record_action  # no live page for these records: announce=False
from staff.changes import change_propose, register_change_kind
from staff.models import ChangeProposal, StaffUser
from staff.roles import (
    ROLES_BY_KEY,
    Role,
    may_grant_roles,
    role_change_apply,
    role_key_check,
    role_names_of,
)
from staff.second_factor.reset import RESET_KIND, reset_apply, reset_version

ROLE_KIND = "staff.role"
ACCESS_KIND = "staff.access"


def _user(proposal: ChangeProposal) -> StaffUser:
    return StaffUser.objects.get(pk=proposal.payload["user"])


# --- Role grant and revoke ----------------------------------------------------------------------


def role_change_propose(*, user: StaffUser, role: Role | str, by: StaffUser, grant: bool) -> Any:
    """Propose granting (or revoking) a role: applies once another admin approves it."""
    if not may_grant_roles(by):
        raise PermissionDenied(gettext("Only an admin may grant or revoke roles."))
    if by.pk == user.pk:
        raise PermissionDenied(gettext("You may not change your own roles: ask another admin."))
    key = role_key_check(role)
    before = role_names_of(user)
    after = sorted(set(before) | {key}) if grant else sorted(set(before) - {key})
    verb = "Grant" if grant else "Revoke"
    # The summary is a record: written in English whatever language the proposer reads.
    with translation.override("en"):
        role_name = str(ROLES_BY_KEY[key].display_name)
    return change_propose(
        kind=ROLE_KIND,
        by=by,
        target=user,
        target_label=user.email,
        summary=f"{verb} the role {role_name} {'to' if grant else 'from'} {user.email}",
        before={"groups": before},
        after={"groups": after},
        payload={"user": user.pk, "role": key, "grant": grant},
    )


def _digest(value: object) -> str:
    """A change's version of its target: a digest of the target's JSON, which can outgrow the
    200 characters of `ChangeProposal.target_version` (a role group's permissions do)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def _groups_version(proposal: ChangeProposal) -> str:
    return _digest(access_of(_user(proposal)))


def _role_apply(proposal: ChangeProposal, *, by: StaffUser | None) -> None:
    role_change_apply(
        user=_user(proposal),
        role=proposal.payload["role"],
        by=by,
        grant=bool(proposal.payload["grant"]),
    )


# --- Access changed on the Django admin's user form ---------------------------------------------


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


def access_change_propose(
    *, user: StaffUser, by: StaffUser, after: dict[str, Any]
) -> ChangeProposal:
    """Propose a user's new access as the admin's user form has it (flags, groups, permissions)."""
    before = access_of(user)
    changed = sorted(k for k in after if after[k] != before.get(k))
    return change_propose(
        kind=ACCESS_KIND,
        by=by,
        target=user,
        target_label=user.email,
        summary=f"Change the access of {user.email} ({', '.join(changed)})",
        before=before,
        after=after,
        payload={"user": user.pk, "after": after},
    )


def _access_apply(proposal: ChangeProposal, *, by: StaffUser | None) -> None:
    after = proposal.payload["after"]
    with transaction.atomic():
        user = StaffUser.objects.select_for_update().get(pk=proposal.payload["user"])
        before = access_of(user)
        # Proposals made before `is_active` was part of access leave it as it is.
        user.is_active = bool(after.get("is_active", user.is_active))
        user.is_superuser = bool(after["is_superuser"])
        user.is_staff = bool(after["is_staff"])
        user.save(update_fields=["is_active", "is_superuser", "is_staff"])
        user.groups.set(Group.objects.filter(name__in=after["groups"]))
        wanted = {tuple(name.split(".", 1)) for name in after["user_permissions"]}
        permissions = [
            p
            for p in Permission.objects.select_related("content_type")
            if (p.content_type.app_label, p.codename) in wanted
        ]
        user.user_permissions.set(permissions)
        record_action(
            actor=by,
            action="role.changed_in_admin",
            target=user,
            before=before,
            after=access_of(user),
            announce=False,
        )


# --- A role's group changed in the Django admin (its name or permissions) -----------------------

GROUP_KIND = "staff.group"


def group_access_of(group: Group) -> dict[str, Any]:
    return {"name": group.name, "permissions": _permission_names(group.permissions)}


def group_change_propose(*, group: Group, by: StaffUser, after: dict[str, Any]) -> ChangeProposal:
    """Propose a role group's new name or permissions (what everyone holding it may do)."""
    before = group_access_of(group)
    return change_propose(
        kind=GROUP_KIND,
        by=by,
        target=group,
        target_label=group.name,
        summary=f"Change the role group {group.name} "
        f"({', '.join(k for k in after if after[k] != before[k])})",
        before=before,
        after=after,
        payload={"group": group.pk, "after": after},
    )


def _group_version(proposal: ChangeProposal) -> str:
    group = Group.objects.filter(pk=proposal.payload["group"]).first()
    return _digest(group_access_of(group)) if group else "gone"


def _group_apply(proposal: ChangeProposal, *, by: StaffUser | None) -> None:
    after = proposal.payload["after"]
    group = Group.objects.select_for_update().get(pk=proposal.payload["group"])
    before = group_access_of(group)
    group.name = after["name"]
    group.save(update_fields=["name"])
    wanted = {tuple(name.split(".", 1)) for name in after["permissions"]}
    group.permissions.set(
        p
        for p in Permission.objects.select_related("content_type")
        if (p.content_type.app_label, p.codename) in wanted
    )
    record_action(
        actor=by,
        action="role.group_changed_in_admin",
        target=group,
        details={"before": before, "after": group_access_of(group)},
        announce=False,
    )


def register_staff_change_kinds() -> None:
    register_change_kind(
        GROUP_KIND,
        apply=_group_apply,
        version=_group_version,
        label=gettext_lazy("Role group (Django admin)"),
    )
    register_change_kind(
        ROLE_KIND, apply=_role_apply, version=_groups_version, label=gettext_lazy("Role")
    )
    register_change_kind(
        ACCESS_KIND,
        apply=_access_apply,
        version=_groups_version,
        label=gettext_lazy("Access (Django admin)"),
    )
    register_change_kind(
        RESET_KIND,
        apply=reset_apply,
        version=reset_version,
        label=gettext_lazy("Second-factor reset"),
    )
