"""Who may act on reconciliation: the schedule always, a person with the permission."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext

from staff.models import StaffUser


def require(user: StaffUser | None, permission: str) -> None:
    """`None` is the system (the schedule); a person needs the permission."""
    if user is not None and not user.has_perm(permission):
        raise PermissionDenied(
            gettext("You do not have the permission %(permission)s.") % {"permission": permission}
        )
