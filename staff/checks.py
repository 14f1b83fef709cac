"""Start-up checks of staff's declarations: every role that may take a step-up action must have a
second factor to step up with (`settings.PAYOPS_SECOND_FACTOR_ROLES`), so no one is handed a button
whose only answer is "You have no second factor yet"."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core import checks

from staff.roles import PRIVILEGED_SCOPES, ROLES, Role, scope_permissions

# The permissions whose actions ask for step-up (`step_up_require`: approve and release payouts,
# approve recipients, environments, webhooks, the approval policy, admin changes): the same ones a
# token may only carry when it was made after a step-up (roles.PRIVILEGED_SCOPES).
STEP_UP_PERMISSIONS = scope_permissions(PRIVILEGED_SCOPES)


def roles_without_second_factor(
    roles: Iterable[Role], *, second_factor_roles: Iterable[str]
) -> list[tuple[Role, list[str]]]:
    """Each role holding a step-up permission that is not a second-factor role, with those
    permissions (sorted)."""
    required = set(second_factor_roles)
    found = []
    for role in roles:
        step_up = sorted(STEP_UP_PERMISSIONS.intersection(role.permissions))
        if step_up and role.key not in required:
            found.append((role, step_up))
    return found


@checks.register()
def step_up_roles_have_a_second_factor(
    app_configs: Any = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """staff.E001 for each role that may act with step-up but is never asked to enrol."""
    return [
        checks.Error(
            f"The role {role.key!r} holds step-up permissions ({', '.join(permissions)}) but is "
            "not in PAYOPS_SECOND_FACTOR_ROLES: its people could never step up.",
            hint=f"Add {role.key!r} to PAYOPS_SECOND_FACTOR_ROLES, or take those permissions "
            "from the role (staff/roles.py).",
            id="staff.E001",
        )
        for role, permissions in roles_without_second_factor(
            ROLES, second_factor_roles=settings.PAYOPS_SECOND_FACTOR_ROLES
        )
    ]
