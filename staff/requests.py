"""The staff member a request acts as, for every page and API endpoint."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from staff.models import StaffUser


def staff_of(request: HttpRequest) -> StaffUser:
    """The signed-in (or token-authenticated) staff member; anyone else is refused (403).

    Views behind login_required and endpoints behind the API's auth always have one; the check
    keeps a misconfigured route from acting as an anonymous user."""
    user = request.user
    if not isinstance(user, StaffUser):
        raise PermissionDenied
    return user
